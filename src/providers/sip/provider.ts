import { randomBytes, randomInt } from 'node:crypto';
import type { Channel, Outgoing, Provider, ProviderContext, SendResult } from '../../channels/provider-port.js';
import { placeCall, type CallMedia, type PlacedCall } from './call.js';
import { openRtpSocket, type RtpSocket } from './rtp.js';
import { parseMediaAnswer } from './sdp.js';
import { callRate, type SpokenPrompts } from './speech.js';
import type { DigestCredentials } from './digest.js';
import { topBranch, writeResponse, type SipMessage, type SipResponse } from './message.js';
import type { CallIdentity, LocalEnd } from './requests.js';
import { uriHost, type SipTrunk } from './settings.js';
import { createTransport, describe, type SipTransport } from './transport.js';

/** What the sip provider is configured with: its settings, parsed, and its timings. */
export interface SipOptions {
  readonly trunk: SipTrunk;
  readonly credentials: DigestCredentials | null;
  readonly localAddress: string | null;
  readonly localPort: number;
  readonly fromHost: string;
  readonly numberFormat: 'e164' | 'digits';
  readonly ringMs: number;
  /** How long after its ring time a call still answers late responses (RFC 3261's 64*T1 by default). */
  readonly lingerMs: number;
  /** How long stop() waits for calls still being cancelled or hung up. */
  readonly stopGraceMs: number;
  readonly connectTimeoutMs: number;
  /** The audio of voice calls (contract 13). */
  readonly prompts: SpokenPrompts;
  /** Told how long each answered voice call took from the answer to its first RTP packet (the bench reads it). */
  readonly onFirstPacket?: (ms: number) => void;
}

const newBranch = (): string => `z9hG4bK${randomBytes(12).toString('hex')}`;

/** A caller id as a log may show it: its last 4 digits are the code. */
const maskedCallerId = (callerId: string): string => `${callerId.slice(0, -4)}****`;

/**
 * Dropped calls (CONTRACT.md section 8) and calls that read the code (section 13) through a SIP trunk, over UDP or
 * TCP: a voice call is answered, hears the code as G.711 over RTP, and is ended with BYE.
 */
export class SipProvider implements Provider {
  readonly name = 'sip';
  readonly channels: readonly Channel[] = ['call', 'voice'];
  private readonly transport: SipTransport;
  /** Response handlers by the branch of the request they answer. */
  private readonly routes = new Map<string, (response: SipResponse) => void>();
  private readonly calls = new Map<string, PlacedCall>();
  private stopping = false;

  constructor(
    private readonly options: SipOptions,
    private readonly context: ProviderContext,
  ) {
    this.transport = createTransport({
      trunk: options.trunk,
      localAddress: options.localAddress,
      localPort: options.localPort,
      connectTimeoutMs: options.connectTimeoutMs,
      onMessage: (message, reply) => this.onMessage(message, reply),
      onError: (reason) => context.logger.warn({ provider: 'sip' }, `sip transport: ${reason}`),
    });
  }

  async start(): Promise<void> {
    const { host, port, transport } = this.options.trunk;
    try {
      const local = await this.transport.open();
      this.context.logger.info({ provider: 'sip', trunk: `${uriHost(host)}:${port}`, transport, local: `${uriHost(local.address)}:${local.port}` }, 'sip trunk ready');
    } catch (err) {
      // Calls try again to open it; each fails as transient until the trunk can be reached.
      this.context.logger.error({ provider: 'sip', trunk: `${uriHost(host)}:${port}`, transport, reason: describe(err) }, 'sip trunk not reachable');
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const pending = [...this.calls.values()];
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(pending.map((c) => c.done)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.stopGraceMs))),
    ]);
    clearTimeout(timer);
    for (const call of [...this.calls.values()]) call.finish();
    await this.transport.close();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel === 'sms' || message.channel === 'telegram' || message.channel === 'silent') return { kind: 'permanent', reason: 'the sip provider places calls only' };
    if (this.stopping) return { kind: 'transient', reason: 'the sip provider is stopping' };
    let local: LocalEnd;
    try {
      local = { ...(await this.transport.open()), protocol: this.transport.protocol };
    } catch (err) {
      return { kind: 'transient', reason: `sip: ${describe(err)}` };
    }
    let voice: { media: CallMedia; rtp: RtpSocket } | null = null;
    if (message.channel === 'voice') {
      try {
        voice = await this.voiceMedia(local, await this.options.prompts.audio(message.language, message.code, message.repeat, message.words));
      } catch (err) {
        return { kind: 'transient', reason: `sip: the call's audio could not be made (${err instanceof Error ? err.message : 'unknown error'})` };
      }
    }
    const identity = this.identity(message.to, message.channel === 'call' ? message.callerId : message.from);
    const call = placeCall(
      {
        send: (data) => this.transport.send(data),
        reliable: this.transport.reliable,
        local,
        identity,
        credentials: this.options.credentials,
        ringMs: this.options.ringMs,
        lingerMs: this.options.lingerMs,
        route: (branch, handler) => this.routes.set(branch, handler),
        forget: (branch) => this.routes.delete(branch),
        newBranch,
        sessionId: randomInt(1, 2 ** 31),
        ...(voice && { media: voice.media }),
      },
      signal,
    );
    this.calls.set(identity.callId, call);
    void call.done.then(() => {
      this.calls.delete(identity.callId);
      voice?.rtp.close();
    });
    const result = await call.outcome;
    this.context.logger.info(
      {
        provider: 'sip',
        callId: identity.callId,
        to: message.to,
        ...(message.channel === 'call' ? { callerId: maskedCallerId(message.callerId) } : { from: message.from, channel: 'voice' }),
        result: result.kind,
        ...(result.kind !== 'accepted' && { reason: result.reason }),
      },
      'sip call placed',
    );
    return result;
  }

  /** A voice call's RTP socket (on the address the SIP messages advertise) and what it plays once answered. */
  private async voiceMedia(local: LocalEnd, pcm: Int16Array): Promise<{ media: CallMedia; rtp: RtpSocket }> {
    const rtp = await openRtpSocket(local.address);
    const media: CallMedia = {
      rtpPort: rtp.port,
      maxPlayMs: Math.ceil((pcm.length / callRate) * 1000) + 2_000,
      play: async (answerSdp, signal) => {
        const answer = parseMediaAnswer(answerSdp);
        if (answer === null) {
          this.context.logger.warn({ provider: 'sip' }, 'the answer has no PCMU/PCMA audio stream we can send to; the call is ended');
          return;
        }
        const answered = performance.now();
        await rtp.play(answer, pcm, signal, () => this.options.onFirstPacket?.(performance.now() - answered));
      },
    };
    return { media, rtp };
  }

  /** The URIs of one call: sip:<to>@trunk, and the caller id at SIP_FROM_HOST in From and P-Asserted-Identity. */
  private identity(to: string, callerId: string): CallIdentity {
    const { trunk, fromHost, numberFormat } = this.options;
    const user = (e164: string) => (numberFormat === 'digits' ? e164.replace(/^\+/, '') : e164);
    const requestUri = `sip:${user(to)}@${uriHost(trunk.host)}${trunk.port === 5060 ? '' : `:${trunk.port}`}`;
    const caller = `<sip:${user(callerId)}@${uriHost(fromHost)}>`;
    const fromTag = randomBytes(8).toString('hex');
    return {
      callId: randomBytes(16).toString('hex'),
      fromTag,
      requestUri,
      to: `<${requestUri}>`,
      from: `${caller};tag=${fromTag}`,
      assertedIdentity: caller,
    };
  }

  /** Responses go to the call whose branch they carry; the few requests a trunk sends us are answered here. */
  private onMessage(message: SipMessage, reply: (data: Buffer) => void): void {
    if (message.kind === 'response') {
      const branch = topBranch(message);
      if (branch !== null) this.routes.get(branch)?.(message);
      return;
    }
    if (message.method === 'ACK') return;
    if (message.method === 'OPTIONS') reply(writeResponse(message, 200, 'OK'));
    else if (message.method === 'BYE') {
      // The callee hung up first: the call already counted as delivered, and our own BYE ends nothing more.
      const callId = message.headers.get('call-id')?.[0] ?? '';
      const call = this.calls.get(callId);
      reply(call ? writeResponse(message, 200, 'OK') : writeResponse(message, 481, 'Call/Transaction Does Not Exist'));
      call?.hungUp();
    } else reply(writeResponse(message, 501, 'Not Implemented'));
  }
}
