import { setImmediate as nextTurn } from 'node:timers/promises';
import { PDU } from 'smpp';
import type { Outgoing, Provider, ProviderContext, SendResult } from '../../channels/provider-port.js';
import { isE164Form } from '../../domain/phone.js';
import { SmppLink, type Exchange, type LinkTiming } from './link.js';
import { parseReceipt } from './receipt.js';
import { ReceiptRouter, type PartGroup } from './receipts.js';
import type { SmppEndpoint } from './settings.js';
import { describeStatus, refusal, STATUS } from './status.js';
import { encodeText, ESM_CLASS_UDHI, MAX_PARTS } from './text.js';
import { Window } from './window.js';

/** What the smpp provider is made of: its parsed settings and timings. */
export interface SmppOptions {
  readonly endpoint: SmppEndpoint;
  readonly window: number;
  readonly systemType: string;
  readonly timing: LinkTiming;
  /** How long stop() lets sends in flight end before it unbinds. */
  readonly stopGraceMs: number;
}

/** deliver_sm_resp status when a receipt could not be recorded: "ESME receiver temporary app error", the SMSC retries. */
const RETRY_LATER = STATUS.ESME_RX_T_APPN;

type Failure = Exclude<SendResult, { kind: 'accepted' }>;
const transient = (reason: string): Failure => ({ kind: 'transient', reason });

/** TON/NPI and digits of the sender: an E.164 number (TON 1, NPI 1) or an alphanumeric id (TON 5, NPI 0). */
function sourceAddress(from: string): { ton: number; npi: number; addr: string } | null {
  if (isE164Form(from)) return { ton: 1, npi: 1, addr: from.slice(1) };
  if (/^[A-Za-z0-9 .\-_&]{1,11}$/.test(from)) return { ton: 5, npi: 0, addr: from };
  return null;
}

/** The SMS provider that speaks SMPP 3.4 to an SMSC over one transceiver bind. */
export class SmppProvider implements Provider {
  readonly name = 'smpp';
  readonly channels = ['sms'] as const;
  /** An SMSC numbers its messages itself (and may start again after a restart): ids are its bind's. */
  readonly account: string;
  private readonly link: SmppLink;
  private readonly router = new ReceiptRouter();
  private readonly window: Window;
  /** Sends between their first slot and their result; stop() waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** submit_sm waiting for their submit_sm_resp: a receipt for an id not yet known waits for these. */
  private readonly awaitingResponse = new Set<Promise<Exchange>>();
  private stopping = false;
  private reference: number;

  constructor(
    private readonly options: SmppOptions,
    private readonly context: ProviderContext,
  ) {
    this.window = new Window(options.window);
    this.account = `${options.endpoint.systemId}@${options.endpoint.host}:${options.endpoint.port}`;
    this.reference = Math.floor(options.timing.random() * 256);
    this.link = new SmppLink(options.endpoint, options.systemType, options.timing, context.logger, (pdu, answer) =>
      void this.deliverSm(pdu, answer),
    );
  }

  start(): Promise<void> {
    this.stopping = false;
    return this.link.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const grace = new Promise<void>((resolve) => setTimeout(resolve, this.options.stopGraceMs).unref());
    await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
    await this.link.stop();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return { kind: 'permanent', reason: 'the smpp provider sends SMS only' };
    if (this.stopping) return transient('the smpp provider is stopping');
    if (!isE164Form(message.to)) return { kind: 'permanent', reason: 'destination is not an E.164 number' };
    const source = sourceAddress(message.from);
    if (!source) return { kind: 'permanent', reason: 'sender is neither an E.164 number nor an alphanumeric id of 1 to 11 characters' };
    const encoded = encodeText(message.text, this.reference);
    if (!encoded) return { kind: 'permanent', reason: `text needs more than ${MAX_PARTS} parts` };
    if (encoded.parts.length > 1) this.reference = (this.reference + 1) % 256;
    const group = encoded.parts.length > 1 ? this.router.newGroup(encoded.parts.length) : null;
    const sending = (async (): Promise<SendResult> => {
      let messageId: string | null = null;
      for (const part of encoded.parts) {
        const pdu = new PDU('submit_sm', {
          source_addr_ton: source.ton,
          source_addr_npi: source.npi,
          source_addr: source.addr,
          dest_addr_ton: 1,
          dest_addr_npi: 1,
          destination_addr: message.to.slice(1),
          esm_class: part.udh ? ESM_CLASS_UDHI : 0,
          registered_delivery: 1,
          data_coding: encoded.dataCoding,
          short_message: part.shortMessage,
        });
        const result = await this.submit(pdu, signal, group);
        if (result.kind !== 'accepted') return result;
        messageId ??= result.messageId;
      }
      return messageId === null ? transient('nothing was submitted') : { kind: 'accepted', messageId };
    })();
    this.inFlight.add(sending);
    try {
      return await sending;
    } finally {
      this.inFlight.delete(sending);
    }
  }

  /** One submit_sm: waits for a window slot, which stays taken until the SMSC answers, the time-out, or a drop. */
  private async submit(pdu: PDU, signal: AbortSignal, group: PartGroup | null): Promise<SendResult> {
    if (!(await this.window.acquire(signal))) return transient('aborted while waiting for the SMPP window');
    if (!this.link.bound) {
      this.window.release();
      return transient('not bound to the SMSC');
    }
    // Awaited as long as the caller waits (its signal), not the link's own response time: a late submit_sm_resp
    // is still this send's outcome. One promise per submit: the answer, or the caller's abort, whichever comes
    // first (the link's one listener on the signal tells of the abort).
    const outcome = await new Promise<Exchange | Failure>((resolve) => {
      const exchange = this.link.request(pdu, signal, () => resolve(transient('aborted while waiting for submit_sm_resp')));
      this.awaitingResponse.add(exchange);
      void exchange.finally(() => {
        this.awaitingResponse.delete(exchange);
        this.window.release();
      });
      void exchange.then(resolve);
    });
    if (!('ok' in outcome)) return outcome;
    if (!outcome.ok) return transient(outcome.reason);
    const { command_status: status } = outcome.response;
    if (status !== STATUS.ESME_ROK) return refusal(status);
    const id = outcome.response['message_id'];
    if (typeof id !== 'string' || id === '') return transient('SMSC accepted the message without a message_id');
    if (group) this.router.addPart(group, id);
    return { kind: 'accepted', messageId: id };
  }

  /**
   * A deliver_sm: a receipt goes to onReceipt, and deliver_sm_resp follows only once it is recorded. A receipt
   * can overtake the submit_sm_resp of its message; one for an id we do not know yet first waits for the
   * submit_sm_resp then outstanding (each bounded by the response time-out), so it maps to the right messageId
   * and reaches the service after the send's result.
   */
  private async deliverSm(pdu: PDU, answer: (status: number) => void): Promise<void> {
    const parsed = parseReceipt(pdu);
    if (!parsed) {
      this.context.logger.info({ provider: 'smpp', esmClass: pdu['esm_class'] }, 'SMPP deliver_sm that is not a receipt ignored');
      return answer(STATUS.ESME_ROK);
    }
    if (!this.router.knows(parsed.smscId) && this.awaitingResponse.size > 0) {
      await Promise.allSettled([...this.awaitingResponse]);
      await nextTurn(); // lets the sends that just ended hand their result back first
    }
    const receipt = this.router.route(parsed);
    if (!receipt) return answer(STATUS.ESME_ROK);
    try {
      // Recorded, or kept by the service for a send it does not know yet (its acceptance not committed, or not ours).
      await this.context.onReceipt(this.name, receipt, this.account);
      answer(STATUS.ESME_ROK);
    } catch (error) {
      this.context.logger.error(
        { provider: 'smpp', messageId: receipt.messageId, error: error instanceof Error ? error.message : String(error) },
        `SMPP receipt not recorded, answering ${describeStatus(RETRY_LATER)} so that the SMSC sends it again`,
      );
      answer(RETRY_LATER);
    }
  }
}
