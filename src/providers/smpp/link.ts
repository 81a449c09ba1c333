import { connect, PDU, type Session } from 'smpp';
import type { ProviderContext } from '../../channels/provider-port.js';
import type { SmppEndpoint } from './settings.js';
import { refuseShortPdus } from './pdu-length.js';
import { describeStatus, STATUS } from './status.js';

refuseShortPdus();

/** Timings of the bind; the defaults suit a real SMSC, tests shorten them. */
export interface LinkTiming {
  /** First reconnect delay; it doubles after every failed attempt, up to backoffMaxMs, then is jittered. */
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /**
   * A bind counts as working, and the back-off starts again from backoffInitialMs, once it has stayed up this long
   * or a request on it was answered. An accepted bind alone proves nothing: an SMSC that accepts and drops at once
   * would be bound again every backoffInitialMs, forever, and carriers block such bind storms.
   */
  readonly stableBindMs: number;
  /** How long stop() waits for unbind_resp: a shutdown has SHUTDOWN_GRACE_MS in all, not responseTimeoutMs. */
  readonly unbindTimeoutMs: number;
  /** How long a request (bind, submit_sm, enquire_link, unbind) waits for its response. */
  readonly responseTimeoutMs: number;
  readonly enquireLinkMs: number;
  /** In [0, 1): the jitter's source. */
  readonly random: () => number;
}

/** A request's outcome: its response (any command_status), or why none came. */
export type Exchange = { readonly ok: true; readonly response: PDU } | { readonly ok: false; readonly reason: string };

/** A request the SMSC sent us (deliver_sm) and the way to answer it on the connection it came on. */
export type InboundHandler = (request: PDU, answer: (commandStatus: number) => void) => void;

interface Pending {
  readonly settle: (exchange: Exchange) => void;
  /** When it is given up if unanswered (Date.now()); with a caller's signal, responseTimeoutMs after it aborts. */
  deadline: number;
}

/**
 * One SMPP transceiver bind kept alive: binds, answers and sends enquire_link, and binds again after a drop or
 * a refused bind, waiting longer each time. Requests fail at once while unbound; every request waits at most
 * responseTimeoutMs; a drop fails every request still waiting.
 */
export class SmppLink {
  private session: Session | null = null;
  private isBound = false;
  private stopped = false;
  private attempt = 0;
  /** When the current bind was accepted (Date.now()), and whether a request on it has been answered since. */
  private boundAt = 0;
  private proven = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private enquireTimer: NodeJS.Timeout | null = null;
  private readonly pending = new Map<Session, Map<number, Pending>>();
  /** Gives up requests past their deadline: one timer for all of them, not one per request (the send path's cost). */
  private sweepTimer: NodeJS.Timeout | null = null;
  /** A session's socket is corked until the end of the tick, so PDUs written together go in one write. */
  private corked: Session | null = null;
  private firstOutcome: (() => void) | null = null;

  constructor(
    private readonly endpoint: SmppEndpoint,
    private readonly systemType: string,
    private readonly timing: LinkTiming,
    private readonly logger: ProviderContext['logger'],
    private readonly onDeliverSm: InboundHandler,
  ) {}

  get bound(): boolean {
    return this.isBound;
  }

  /** Connects and binds; resolves after the first bind is accepted or has failed (binding goes on in the background). */
  start(): Promise<void> {
    this.stopped = false;
    return new Promise((resolve) => {
      this.firstOutcome = resolve;
      this.open();
    });
  }

  /**
   * Sends a request on the bound session and waits for its response: responseTimeoutMs, or with `signal` until
   * it aborts (a submit_sm, whose late answer is still its send's outcome).
   */
  request(pdu: PDU, signal?: AbortSignal, onAbort?: () => void): Promise<Exchange> {
    const session = this.session;
    if (!session || !this.isBound) return Promise.resolve({ ok: false, reason: 'not bound to the SMSC' });
    return this.exchange(session, pdu, signal, onAbort).then((answer) => this.prove(session, answer));
  }

  /**
   * Unbinds, closes, and binds no more, within unbindTimeoutMs for the unbind_resp and as long again for the
   * close: an SMSC that ignores unbind (or never closes) cannot hold a shutdown past its grace.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const session = this.session;
    if (!session) return;
    const bound = Math.min(this.timing.unbindTimeoutMs, this.timing.responseTimeoutMs);
    if (this.isBound) {
      this.isBound = false;
      let timer: NodeJS.Timeout | undefined;
      const answer = await Promise.race([
        this.exchange(session, new PDU('unbind')),
        new Promise<Exchange>((resolve) => (timer = setTimeout(() => resolve({ ok: false, reason: `no unbind_resp within ${bound} ms` }), bound))),
      ]);
      clearTimeout(timer);
      if (!answer.ok) this.logger.warn({ provider: 'smpp', reason: answer.reason }, 'SMPP unbind not answered');
    }
    await new Promise<void>((resolve) => {
      if (session.socket.destroyed) return resolve();
      const timer = setTimeout(() => session.destroy(), bound);
      session.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      session.close();
    });
  }

  private open(): void {
    this.reconnectTimer = null;
    if (this.stopped) return;
    const { host, port, tls } = this.endpoint;
    const session = connect({ host, port, tls, ...(tls ? { servername: host } : {}) });
    this.session = session;
    // Without it, Nagle's algorithm holds a submit_sm written while the previous one is unacknowledged, and the
    // window degrades to one PDU per round trip.
    session.socket.setNoDelay(true);
    this.pending.set(session, new Map());
    // A host that never answers the TCP handshake would otherwise hold start() for the system's own time-out.
    const connectTimer = setTimeout(() => {
      if (!session.socket.connecting) return;
      this.logger.warn({ provider: 'smpp', host, port }, 'SMPP connection not established in time');
      session.destroy();
    }, this.timing.responseTimeoutMs);
    session.on(tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(connectTimer);
      void this.bind(session);
    });
    session.socket.once('close', () => clearTimeout(connectTimer));
    session.on('pdu', (pdu: PDU) => this.inbound(session, pdu));
    session.on('error', (error: Error) => {
      this.logger.warn({ provider: 'smpp', host, port, error: error.message }, 'SMPP connection error');
      // A PDU the package could not decode (malformed, or shorter than its header) leaves the socket open: end it,
      // the close fails what waits on it and binds again.
      session.destroy();
    });
    session.on('close', () => this.closed(session));
  }

  private async bind(session: Session): Promise<void> {
    const { systemId, password, host, port } = this.endpoint;
    const answer = await this.exchange(
      session,
      new PDU('bind_transceiver', { system_id: systemId, password, system_type: this.systemType, interface_version: 0x34 }),
    );
    if (session !== this.session) return;
    if (answer.ok && answer.response.command_status === STATUS.ESME_ROK) {
      this.isBound = true;
      // The back-off is not reset yet: see LinkTiming.stableBindMs.
      this.boundAt = Date.now();
      this.proven = false;
      this.logger.info({ provider: 'smpp', host, port, systemId }, 'SMPP bound as transceiver');
      this.enquireTimer = setInterval(() => void this.enquireLink(session), this.timing.enquireLinkMs);
      this.settleStart();
      return;
    }
    const reason = answer.ok ? `bind refused: ${describeStatus(answer.response.command_status)}` : `bind ${answer.reason}`;
    this.logger.warn({ provider: 'smpp', host, port, systemId, reason }, 'SMPP bind failed');
    session.destroy();
  }

  /** A link that stopped answering enquire_link is dead even if TCP has not noticed: drop it and bind again. */
  private async enquireLink(session: Session): Promise<void> {
    const answer = this.prove(session, await this.exchange(session, new PDU('enquire_link')));
    if (!answer.ok && session === this.session && !this.stopped) {
      this.logger.warn({ provider: 'smpp', reason: answer.reason }, 'SMPP enquire_link not answered, reconnecting');
      session.destroy();
    }
  }

  private inbound(session: Session, pdu: PDU): void {
    if (pdu.isResponse()) return; // the package hands responses to their request's callback
    const reply = (options: Record<string, unknown>) => {
      if (!session.socket.destroyed) session.send(pdu.response(options));
    };
    switch (pdu.command) {
      case 'enquire_link':
        return reply({});
      case 'deliver_sm':
        return this.onDeliverSm(pdu, (status) => reply({ command_status: status }));
      case 'unbind':
        this.logger.warn({ provider: 'smpp' }, 'SMSC unbound, reconnecting');
        this.isBound = false;
        reply({});
        session.close();
        return;
      case 'alert_notification':
        return; // has no response
      default:
        // generic_nack, as SMPP 3.4 section 3.3 asks for a command we do not take.
        session.send(new PDU('generic_nack', { sequence_number: pdu.sequence_number, command_status: 0x03 }));
    }
  }

  /** `onAbort`: told when `signal` aborts first (the one listener a request puts on its caller's signal). */
  private exchange(session: Session, pdu: PDU, signal?: AbortSignal, onAbort?: () => void): Promise<Exchange> {
    const pending = this.pending.get(session);
    if (!pending) return Promise.resolve({ ok: false, reason: 'connection lost' });
    this.sweepSoon();
    this.cork(session);
    return new Promise((resolve) => {
      let seq = 0;
      let abort: (() => void) | null = null;
      const settle = (exchange: Exchange) => {
        pending.delete(seq);
        // The caller's signal lives as long as its time-out: what it holds of this request goes now.
        if (abort && signal) signal.removeEventListener('abort', abort);
        resolve(exchange);
      };
      const written = session.send(pdu, (response) => settle({ ok: true, response }));
      seq = pdu.sequence_number;
      if (!written) settle({ ok: false, reason: 'connection lost' });
      else if (!signal) pending.set(seq, { settle, deadline: Date.now() + this.timing.responseTimeoutMs });
      else {
        // The SMSC still holds the request after the caller gave up: its window slot stays taken until the answer
        // or the usual response time after the abort.
        const entry: Pending = { settle, deadline: Number.POSITIVE_INFINITY };
        const aborted = () => {
          entry.deadline = Date.now() + this.timing.responseTimeoutMs;
          onAbort?.();
        };
        pending.set(seq, entry);
        if (signal.aborted) aborted();
        else signal.addEventListener('abort', (abort = aborted), { once: true });
      }
    });
  }

  /** Writes of this tick on `session` leave together, in one system call, when the tick ends. */
  private cork(session: Session): void {
    if (this.corked === session) return;
    this.corked = session;
    session.socket.cork();
    process.nextTick(() => {
      this.corked = null;
      session.socket.uncork();
    });
  }

  /** Keeps the sweep running while any request waits; a request is given up within a tenth of the time-out past it. */
  private sweepSoon(): void {
    if (this.sweepTimer) return;
    const every = Math.max(10, Math.floor(this.timing.responseTimeoutMs / 10));
    this.sweepTimer = setInterval(() => {
      const now = Date.now();
      let waiting = 0;
      for (const pending of this.pending.values()) {
        for (const p of [...pending.values()]) {
          if (p.deadline <= now) p.settle({ ok: false, reason: 'time-out waiting for the SMSC' });
          else waiting += 1;
        }
      }
      if (waiting === 0 && this.sweepTimer) {
        clearInterval(this.sweepTimer);
        this.sweepTimer = null;
      }
    }, every);
    this.sweepTimer.unref();
  }

  private closed(session: Session): void {
    const pending = this.pending.get(session);
    this.pending.delete(session);
    for (const p of pending?.values() ?? []) p.settle({ ok: false, reason: 'connection lost' });
    if (session !== this.session) return;
    const wasBound = this.isBound;
    this.isBound = false;
    if (wasBound && (this.proven || Date.now() - this.boundAt >= this.timing.stableBindMs)) this.attempt = 0;
    this.session = null;
    if (this.enquireTimer) clearInterval(this.enquireTimer);
    this.enquireTimer = null;
    this.settleStart();
    if (this.stopped) return;
    const delay = this.backoff();
    if (wasBound) this.logger.warn({ provider: 'smpp' }, 'SMPP connection lost');
    this.logger.info({ provider: 'smpp', attempt: this.attempt, delayMs: delay }, 'SMPP binding again after a delay');
    this.reconnectTimer = setTimeout(() => this.open(), delay);
  }

  /** An answered request on the current bind shows the bind works (LinkTiming.stableBindMs). */
  private prove(session: Session, answer: Exchange): Exchange {
    if (answer.ok && session === this.session && this.isBound) this.proven = true;
    return answer;
  }

  /** Exponential back-off, capped, with "equal jitter": between half and all of the capped delay. */
  private backoff(): number {
    const capped = Math.min(this.timing.backoffMaxMs, this.timing.backoffInitialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(capped / 2 + (capped / 2) * this.timing.random());
  }

  private settleStart(): void {
    this.firstOutcome?.();
    this.firstOutcome = null;
  }
}
