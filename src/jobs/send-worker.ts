import type { Logger } from 'pino';
import type { CommittedSend } from '../domain/after-commit.js';
import type { Channel } from '../domain/channel-driver.js';
import type { Clock } from '../domain/ports.js';
import type { SendJob } from '../domain/send-job.js';
import { effectiveStatus, type Verification } from '../domain/verification.js';
import type { Outgoing, Provider, SendResult } from '../channels/provider-port.js';
import type { SendJobQueue } from './send-jobs.js';
import { PeriodicTask } from './periodic-task.js';

export interface SendWorkerDeps {
  readonly jobs: SendJobQueue;
  /** Any client's verification by id. */
  readonly findVerification: (id: string) => Promise<Verification | null>;
  /** The state change when a code cannot be delivered (VerificationService.failDelivery). */
  readonly deliveryFailed: (verificationId: string) => Promise<unknown>;
  /** The message or call a job's channel carries for a verification. */
  readonly outgoing: (channel: Channel, v: Verification, from: string, sendId: string) => Outgoing;
  /** The providers of a channel, in failover order. */
  readonly providers: (channel: Channel) => readonly Provider[];
  /** Seconds to wait before each retry; when they run out the verification is FAILED. */
  readonly retryDelays: readonly number[];
  /** How long a claimed job is held before another worker may take it; longer than a provider call may take. */
  readonly leaseMs: number;
  /** The longest a provider call may take before it counts as a transient failure. */
  readonly providerTimeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

const batchSize = 50;

/** Sends the code of each committed verification through its channel's provider, retrying transient failures. */
export class SendWorker {
  private readonly inFlight = new Set<Promise<void>>();
  /** Claims due jobs: every 500 ms, or at once when woken by a commit of due jobs. */
  private readonly task: PeriodicTask;

  constructor(private readonly deps: SendWorkerDeps) {
    this.task = new PeriodicTask('send', 500, () => this.runOnce(), (name, err) =>
      deps.logger.error({ err, task: name }, 'background task failed'),
    );
  }

  start(): void {
    this.task.start();
  }

  /** Jobs fell due: claim them now rather than at the next poll. */
  wake(): void {
    this.task.wake();
  }

  /** Stops claiming and waits for the sends in flight. */
  async stop(): Promise<void> {
    await this.task.stop();
    await this.idle();
  }

  /** Resolves when no send started here is in flight (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /**
   * Sends the codes of jobs this process has just committed, written claimed by it, with the verification in
   * hand (no queue read). A failure here is logged, and the job falls due again when its claim runs out.
   */
  sendNow(sends: readonly CommittedSend[]): void {
    for (const { job, verification } of sends) this.track(this.deliver(job, verification), job);
  }

  /** Processes one batch of due jobs; true when the batch was full (there may be more). */
  async runOnce(): Promise<boolean> {
    const jobs = await this.deps.jobs.claimDue(this.deps.clock.now(), this.deps.leaseMs, batchSize);
    await Promise.all(jobs.map((job) => this.process(job)));
    return jobs.length === batchSize;
  }

  private track(run: Promise<void>, job: SendJob): void {
    const tracked = run
      .catch((err: unknown) => this.deps.logger.error({ err, verificationId: job.verificationId }, 'send failed unexpectedly; the job comes back after its lease'))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async process(job: SendJob): Promise<void> {
    const { deps } = this;
    const verification = await deps.findVerification(job.verificationId);
    if (!verification || effectiveStatus(verification, deps.clock.now()) !== 'PENDING') {
      await deps.jobs.complete(job.verificationId, deps.clock.now());
      return;
    }
    await this.deliver(job, verification);
  }

  private async deliver(job: SendJob, verification: Verification): Promise<void> {
    const { deps } = this;
    const result = await this.send(job, verification);
    const now = deps.clock.now();
    const log = deps.logger.child({ verificationId: job.verificationId, channel: job.channel, attempt: job.attempts });
    if (result.kind === 'accepted') {
      await deps.jobs.complete(job.verificationId, now);
      log.info({ messageId: result.messageId }, 'code sent');
      return;
    }
    const delay = deps.retryDelays[job.attempts - 1];
    if (result.kind === 'transient' && delay !== undefined) {
      const wait = Math.max(delay, result.retryAfterSeconds ?? 0);
      await deps.jobs.retryAt(job.verificationId, new Date(now.getTime() + wait * 1000), result.reason, now);
      log.warn({ reason: result.reason, retryInSeconds: wait }, 'send failed; will retry');
      return;
    }
    await deps.jobs.fail(job.verificationId, result.reason, now);
    await deps.deliveryFailed(job.verificationId);
    log.warn({ reason: result.reason, permanent: result.kind === 'permanent' }, 'send failed for good; verification FAILED');
  }

  /** One provider call, bounded in time; a provider that throws or overruns is a transient failure. */
  private async send(job: SendJob, v: Verification): Promise<SendResult> {
    const { deps } = this;
    const [provider] = deps.providers(job.channel);
    if (!provider) return { kind: 'permanent', reason: `no provider configured for channel ${job.channel}` };
    const message = deps.outgoing(job.channel, v, job.sender, v.id);
    const signal = AbortSignal.timeout(deps.providerTimeoutMs);
    try {
      return await provider.send(message, signal);
    } catch (err) {
      return { kind: 'transient', reason: signal.aborted ? 'provider timed out' : `provider ${provider.name} threw: ${String(err)}` };
    }
  }
}
