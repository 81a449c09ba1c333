import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createServer, PDU, type Session } from 'smpp';
import type { DeliveryReceipt, ProviderContext } from '../../src/channels/provider-port.js';
import { nextLocalNumber } from '../support/api.js';
import { repoRoot } from '../support/processes.js';

/** Waits until `check` returns a value (not undefined/false), polling; throws after `ms`. */
export async function eventually<T>(check: () => T | undefined | false, what: string, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A ProviderContext that records receipts and log lines; `receiptOutcome` decides how onReceipt settles. */
export function recordingContext(receiptOutcome: () => Promise<void> = () => Promise.resolve()) {
  const receipts: DeliveryReceipt[] = [];
  const log: string[] = [];
  const order: string[] = [];
  const line = (level: string) => (obj: object, msg: string) => void log.push(`${level} ${msg} ${JSON.stringify(obj)}`);
  const context: ProviderContext = {
    callbackUrl: null,
    callRingSeconds: 15,
    messageLog: { record: async () => undefined },
    logger: { info: line('info'), warn: line('warn'), error: line('error') },
    onReceipt: async (provider, receipt) => {
      if (provider !== 'smpp') throw new Error(`unexpected provider ${provider}`);
      order.push(`receipt ${receipt.messageId}`);
      await receiptOutcome();
      receipts.push(receipt);
    },
  };
  return { context, receipts, log, order };
}

// ---- Debian's Net::SMPP as the SMSC (test/peers/smsc.pl) ----

export type SmscEvent = Record<string, unknown> & { readonly event: string };

export interface PerlSmsc {
  readonly port: number;
  readonly events: SmscEvent[];
  /** Kills it; resolves once it has exited (its port is free again). */
  stop(): Promise<void>;
}

/** Null when perl or Net::SMPP is missing (apt-get install libnet-smpp-perl, as .ci/run does). */
export function netSmppMissing(): string | null {
  const probe = spawnSync('perl', ['-MNet::SMPP', '-MJSON::PP', '-e', '1'], { encoding: 'utf8' });
  return probe.status === 0 ? null : 'perl with Net::SMPP not found (Debian: libnet-smpp-perl)';
}

/** `port`: listen there (again, for an SMSC restarted); `submitDelayMs`: answer each submit_sm that late. */
/**
 * A fresh local number (0803...) that smsc.pl receipts as DELIVRD: it sends no receipt to a number ending in 98
 * and an UNDELIV one to a number ending in 99, which a number drawn at random ends in one time in fifty.
 */
export function deliveredNumber(): string {
  for (;;) {
    const local = nextLocalNumber();
    if (!/9[89]$/.test(local)) return local;
  }
}

export async function startPerlSmsc(systemId: string, password: string, options: { port?: number; submitDelayMs?: number } = {}): Promise<PerlSmsc> {
  const args = [path.join(repoRoot, 'test/peers/smsc.pl'), systemId, password, ...(options.port === undefined ? [] : [String(options.port)])];
  const child: ChildProcess = spawn('perl', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...(options.submitDelayMs === undefined ? {} : { SMSC_SUBMIT_DELAY_MS: String(options.submitDelayMs) }) },
  });
  const events: SmscEvent[] = [];
  let buffered = '';
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const l of lines) if (l.trim()) events.push(JSON.parse(l) as SmscEvent);
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const listening = await eventually(() => events.find((e) => e.event === 'listening') ?? (child.exitCode !== null && 'exited'), 'smsc.pl to listen').catch(
    (error: unknown) => {
      child.kill();
      throw error;
    },
  );
  if (listening === 'exited') throw new Error(`smsc.pl exited: ${stderr}`);
  const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  return {
    port: Number(listening.port),
    events,
    stop: () => {
      child.kill();
      return exited;
    },
  };
}

// ---- the smpp package's own server, for the fault cases ----

export interface FakeSmsc {
  readonly port: number;
  readonly sessions: Session[];
  /** submit_sm received, in order, with the session they came on. */
  readonly submits: Array<{ pdu: PDU; session: Session }>;
  readonly binds: Array<{ at: number; accepted: boolean }>;
  /** Every deliver_sm_resp received. */
  readonly deliverResponses: PDU[];
  /** submit_sm received and not yet answered; the most there ever were. */
  outstanding: number;
  maxOutstanding: number;
  enquireLinks: number;
  unbinds: number;
  /** Answers a submit_sm (counts it as no longer outstanding). */
  answer(submit: { pdu: PDU; session: Session }, options: Record<string, unknown>): void;
  close(): Promise<void>;
}

export interface FakeSmscBehaviour {
  /** command_status for the n-th bind (from 0); ESME_ROK when absent. */
  bindStatus?: (n: number) => number;
  /** Called for each submit_sm; answer it now, later, or never. */
  onSubmit?: (submit: { pdu: PDU; session: Session }, smsc: FakeSmsc) => void;
  /** False: enquire_link goes unanswered, as on a dead link. */
  answerEnquireLink?: boolean;
  /** True: every bind is accepted, then the connection is closed at once (an SMSC that drops its binds). */
  dropAfterBind?: boolean;
  /** False: unbind goes unanswered and the connection stays open (an SMSC that ignores it). */
  answerUnbind?: boolean;
}

/** An SMSC from the smpp package, on 127.0.0.1 and a free port; it closes itself after 20 s at the latest. */
export async function startFakeSmsc(behaviour: FakeSmscBehaviour = {}): Promise<FakeSmsc> {
  let next = 0;
  const server = createServer((session) => {
    smsc.sessions.push(session);
    session.on('error', () => session.destroy());
    session.on('pdu', (pdu: PDU) => {
      if (pdu.command === 'bind_transceiver') {
        const status = behaviour.bindStatus?.(smsc.binds.length) ?? 0;
        smsc.binds.push({ at: Date.now(), accepted: status === 0 });
        session.send(pdu.response({ command_status: status, system_id: 'FAKE' }));
        if (behaviour.dropAfterBind) session.close();
      } else if (pdu.command === 'submit_sm') {
        smsc.outstanding++;
        smsc.maxOutstanding = Math.max(smsc.maxOutstanding, smsc.outstanding);
        const submit = { pdu, session };
        smsc.submits.push(submit);
        if (behaviour.onSubmit) behaviour.onSubmit(submit, smsc);
        else smsc.answer(submit, { message_id: `F${++next}` });
      } else if (pdu.command === 'deliver_sm_resp') {
        smsc.deliverResponses.push(pdu);
      } else if (pdu.command === 'enquire_link') {
        smsc.enquireLinks++;
        if (behaviour.answerEnquireLink !== false) session.send(pdu.response());
      } else if (pdu.command === 'unbind') {
        smsc.unbinds++;
        if (behaviour.answerUnbind !== false) session.send(pdu.response());
      }
    });
  });
  const smsc: FakeSmsc = {
    port: 0,
    sessions: [],
    submits: [],
    binds: [],
    deliverResponses: [],
    outstanding: 0,
    maxOutstanding: 0,
    enquireLinks: 0,
    unbinds: 0,
    answer(submit, options) {
      smsc.outstanding--;
      if (!submit.session.socket.destroyed) submit.session.send(submit.pdu.response(options));
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(selfStop);
        for (const s of smsc.sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
  const selfStop = setTimeout(() => void smsc.close(), 20_000);
  selfStop.unref();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(smsc, { port: (server.address() as AddressInfo).port });
}

/** A delivery receipt deliver_sm as an SMSC sends it, with the id in the text only. */
export function receiptPdu(id: string, stat: string): PDU {
  return new PDU('deliver_sm', {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: '2348012345678',
    esm_class: 0x04,
    data_coding: 0,
    short_message: Buffer.from(`id:${id} sub:001 dlvrd:001 submit date:2611231500 done date:2611231501 stat:${stat} err:000 text:`),
  });
}
