import type { Logger } from 'pino';
import type { CommittedSend } from '../domain/after-commit.js';
import { channels, type Channel } from '../domain/channel-driver.js';
import type { Clock } from '../domain/ports.js';
import type { Destination } from '../domain/routes.js';
import type { SentWritten } from '../domain/verification-store.js';
import { jobOwnership, type SendJob } from '../domain/send-job.js';
import { effectiveStatus, type Verification } from '../domain/verification.js';
import type { Outgoing, Provider, SendResult, StepAnswer } from '../channels/provider-port.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { SendJobQueue } from './send-jobs.js';
import { logTaskFailure, PeriodicTask } from './periodic-task.js';

/** Told of every provider call's answer and how long it took (metrics). */
export interface SendObserver {
  sent(channel: Channel, provider: string, result: StepAnswer, seconds: number): void;
}

export interface SendWorkerDeps {
  readonly jobs: SendJobQueue;
  /** Any client's verification by id. */
  readonly findVerification: (id: string) => Promise<Verification | null>;
  /**
   * The state change of a provider's answer, or of a send skipped (null) (DeliveryService.recordSendOutcome);
   * `account` is the provider's (Provider.account).
   */
  /** `to`: the verification whose code it was, for its route's delivery-confirmed failover. */
  readonly recordOutcome: (job: SendJob, provider: string, result: StepAnswer | null, account?: string, to?: Destination) => Promise<SentWritten | void>;
  /** The message or call a job's channel carries for a verification (its text as the client set it). */
  readonly outgoing: (channel: Channel, v: Verification, from: string, sendId: string) => Promise<Outgoing>;
  /** The providers of a channel, in failover order. */
  readonly providers: (channel: Channel) => readonly Provider[];
  /** Which providers are failing again and again, to skip them while others are configured. */
  readonly breaker: CircuitBreaker;
  /** How long a claimed job is held before another worker may take it; longer than a provider call may take. */
  readonly leaseMs: number;
  /**
   * How long a provider call of a channel is expected to take (PROVIDER_TIMEOUT_MS): past it the attempt is in
   * doubt and logged so, but not abandoned: the provider may have taken the code, and sending it again could
   * only send a second copy. Its answer is awaited until the job's claim (leaseMs) is nearly over, the hard bound
   * past which no other worker could be kept from taking the job, and is then recorded against its own attempt.
   */
  readonly providerTimeoutMs: (channel: Channel) => number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly observer?: SendObserver;
}

const batchSize = 50;

/** Sends the code of each committed verification through its channel's provider, retrying transient failures. */
export class SendWorker {
  /** Sends in flight, with the channel each goes through (a call may take longer than an SMS to be answered). */
  private readonly inFlight = new Map<Promise<void>, Channel>();
  /** Aborted when stop() has waited long enough for the sends in flight. */
  private readonly stopping = new AbortController();
  /** Acceptances being recorded, by provider, account and message id: their receipts wait for the commit. */
  private readonly recording = new Map<string, Promise<unknown>>();
  /** Claims due jobs: every 500 ms, or at once when woken by a commit of due jobs. */
  private readonly task: PeriodicTask;

  constructor(private readonly deps: SendWorkerDeps) {
    this.task = new PeriodicTask('send', 500, () => this.runOnce(), (name, err) => logTaskFailure(deps.logger, name, err));
  }

  start(): void {
    this.task.start();
  }

  /** Jobs fell due: claim them now rather than at the next poll. */
  wake(): void {
    this.task.wake();
  }

  /**
   * Stops claiming and waits for the sends in flight, at most the longest provider time-out of their channels
   * (a call is placed while the phone rings, so its time-out is longer than an SMS's): those still waiting then are
   * abandoned unrecorded, their jobs held until their claim runs out (a provider that took the code meanwhile may
   * then be asked again by another worker: docs/sms.md).
   */
  async stop(): Promise<void> {
    await this.task.stop();
    const patience = Math.max(this.deps.providerTimeoutMs('sms'), ...[...this.inFlight.values()].map((channel) => this.deps.providerTimeoutMs(channel)));
    const grace = new Promise<void>((resolve) => setTimeout(resolve, patience).unref());
    await Promise.race([this.idle(), grace]);
    this.stopping.abort();
    await this.idle();
  }

  /** Resolves when no send started here is in flight (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.keys()]);
  }

  /**
   * Sends the codes of jobs this process has just committed, written claimed by it, with the verification in
   * hand (no queue read). A failure here is logged, and the job falls due again when its claim runs out.
   */
  sendNow(sends: readonly CommittedSend[]): void {
    for (const { job, verification } of sends) this.track(this.deliver(job, verification), job);
  }

  /**
   * Resolves once the acceptance of this message that this process is recording has committed (at once when it
   * records none): a receipt that overtook its send's commit then finds the send it is for, not an older one the
   * provider gave the same id (an SMSC numbering its messages again after a restart).
   */
  async recorded(provider: string, account: string, messageId: string): Promise<void> {
    await this.recording.get(messageKey(provider, account, messageId))?.catch(() => undefined);
  }

  private async whileRecording<T>(provider: Provider, messageId: string, recording: Promise<T>): Promise<T> {
    const key = messageKey(provider.name, provider.account ?? '', messageId);
    this.recording.set(key, recording);
    try {
      return await recording;
    } finally {
      if (this.recording.get(key) === recording) this.recording.delete(key);
    }
  }

  /** Processes one batch of due jobs; true when the batch was full (there may be more). */
  async runOnce(): Promise<boolean> {
    const takes = channels.map((channel) => jobOwnership(channel, this.deps.providers(channel).map((p) => p.name)));
    const jobs = await this.deps.jobs.claimDue(this.deps.clock.now(), this.deps.leaseMs, batchSize, takes);
    await Promise.all(jobs.map((job) => this.process(job)));
    return jobs.length === batchSize;
  }

  private track(run: Promise<void>, job: SendJob): void {
    const tracked = run
      .catch((err: unknown) => this.deps.logger.error({ err, verificationId: job.verificationId }, 'send failed unexpectedly; the job comes back after its lease'))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.set(tracked, job.channel);
  }

  private async process(job: SendJob): Promise<void> {
    const { deps } = this;
    const verification = await deps.findVerification(job.verificationId);
    if (!verification || effectiveStatus(verification, deps.clock.now()) !== 'PENDING') {
      await deps.recordOutcome(job, job.provider ?? 'none', null);
      return;
    }
    await this.deliver(job, verification);
  }

  /** One attempt: the provider's answer is recorded by the domain, which retries, fails over or gives up. */
  private async deliver(job: SendJob, verification: Verification): Promise<void> {
    const { deps } = this;
    const provider = this.choose(job);
    if (provider === 'not-here') {
      // Written claimed by this process (a failover it committed), but meant for a provider it does not have: left
      // for a process that has it, once the claim runs out. `log` never stands in for a real provider.
      deps.logger.warn({ verificationId: job.verificationId, channel: job.channel, provider: job.provider }, 'send left for a process with its provider configured');
      return;
    }
    if (!provider) {
      await deps.recordOutcome(job, job.provider ?? 'none', { kind: 'permanent', reason: `no provider configured for channel ${job.channel}` });
      return;
    }
    const started = performance.now();
    const { result, late } = await this.send(provider, job, verification);
    if (this.stopping.signal.aborted) {
      deps.logger.warn({ verificationId: job.verificationId, provider: provider.name }, 'send abandoned at shutdown before the provider answered; the job comes back after its claim');
      return;
    }
    deps.observer?.sent(job.channel, provider.name, result, (performance.now() - started) / 1000);
    // A provider that answers only after the time-out counts as failing, so that new codes go to another one.
    deps.breaker.record(provider.name, result.kind === 'transient' || late);
    const recording = deps.recordOutcome(job, provider.name, result, provider.account ?? '', verification);
    const written = result.kind === 'accepted' ? await this.whileRecording(provider, result.messageId, recording) : await recording;
    const log = deps.logger.child({ verificationId: job.verificationId, channel: job.channel, provider: provider.name, attempt: job.attempts });
    if (written && written.tookIdFrom !== null) {
      log.warn(
        { messageId: result.kind === 'accepted' ? result.messageId : null, previousVerificationId: written.tookIdFrom },
        'the provider gave a message id another send had (it numbers its messages again, e.g. an SMSC after a restart): its receipts now go to this send',
      );
    }
    if (result.kind === 'accepted') log.info({ messageId: result.messageId }, 'code sent');
    else if (result.kind === 'awaiting') log.info({ until: result.until.toISOString() }, "silent step: the device's proof of its number is awaited");
    else log.warn({ reason: result.reason, permanent: result.kind === 'permanent' }, 'send failed');
  }

  /**
   * The job's provider (the first of the list for a job that names none); while its circuit is open, the first
   * closed one after it, if any, so that a failing provider does not hold up codes another could send.
   * 'not-here': the job names a provider this process does not have.
   */
  private choose(job: SendJob): Provider | null | 'not-here' {
    const list = this.deps.providers(job.channel);
    const at = list.findIndex((p) => p.name === job.provider);
    if (job.provider !== null && at < 0 && list.length > 0) return 'not-here';
    const start = Math.max(0, at);
    const preferred = list[start] ?? null;
    if (!preferred || !this.deps.breaker.isOpen(preferred.name)) return preferred;
    return list.slice(start + 1).find((p) => !this.deps.breaker.isOpen(p.name)) ?? preferred;
  }

  /**
   * One provider call. Past the provider time-out it is in doubt (`late`), and still awaited up to the hard bound
   * (nearly the job's claim), so that an answer that comes late is the attempt's outcome rather than a retry's
   * second copy; a provider that throws, or has not answered by the hard bound, is a transient failure.
   */
  private async send(provider: Provider, job: SendJob, v: Verification): Promise<{ result: StepAnswer; late: boolean }> {
    const { deps } = this;
    const message = await deps.outgoing(job.channel, v, job.sender, v.id);
    // A silent step sends nothing: the device proves its number itself (contract 19).
    if (message.channel === 'silent' && provider.awaitProof) return { result: provider.awaitProof(message), late: false };
    const patience = deps.providerTimeoutMs(job.channel);
    const hardBound = hardBoundMs(patience, deps.leaseMs);
    const signal = AbortSignal.any([AbortSignal.timeout(hardBound), this.stopping.signal]);
    let late = false;
    const inDoubt = setTimeout(() => {
      late = true;
      deps.logger.warn(
        { verificationId: job.verificationId, provider: provider.name, attempt: job.attempts, waitingMs: hardBound - patience },
        'no answer from the provider within PROVIDER_TIMEOUT_MS; still waiting for it rather than sending the code again',
      );
    }, patience);
    try {
      return { result: await provider.send(message, signal), late };
    } catch (err) {
      const reason = signal.aborted ? `provider did not answer within ${hardBound} ms` : `provider ${provider.name} threw: ${String(err)}`;
      return { result: { kind: 'transient', reason }, late };
    } finally {
      clearTimeout(inDoubt);
    }
  }
}

function messageKey(provider: string, account: string, messageId: string): string {
  return `${provider}\u0000${account}\u0000${messageId}`;
}

/**
 * How long a provider call is awaited at most: nearly the job's claim (SEND_LEASE_MS, less a tenth for recording
 * the answer), so that no other worker takes the job while its attempt may still be answered; never less than
 * the provider time-out.
 */
export function hardBoundMs(providerTimeoutMs: number, leaseMs: number): number {
  return Math.max(providerTimeoutMs, leaseMs - Math.max(100, Math.ceil(leaseMs / 10)));
}
