import type { Logger } from 'pino';
import type { CallPlacer, SendResult, SmsSender } from '../domain/channels.js';
import type { Clock } from '../domain/ports.js';
import { channelFor } from '../domain/channels.js';
import { effectiveStatus, type Verification } from '../domain/verification.js';
import type { VerificationService } from '../domain/verification-service.js';
import type { VerificationStore } from '../domain/verification-store.js';
import type { SendJob, SendJobStore } from '../store/send-job-store.js';

export interface SendWorkerDeps {
  readonly jobs: SendJobStore;
  readonly verifications: VerificationStore;
  readonly service: VerificationService;
  readonly sms: SmsSender;
  readonly calls: CallPlacer;
  /** Seconds to wait before each retry; when they run out the verification is FAILED. */
  readonly retryDelays: readonly number[];
  readonly clock: Clock;
  readonly logger: Logger;
}

/** How long a claimed job is held before another worker may take it (the provider call must end sooner). */
export const sendLeaseMs = 60_000;
const leaseMs = sendLeaseMs;
const batchSize = 50;

/** Sends the code of each committed verification through its channel's provider, retrying transient failures. */
export class SendWorker {
  constructor(private readonly deps: SendWorkerDeps) {}

  private readonly inFlight = new Set<Promise<void>>();

  /**
   * Sends a just-created verification's code from this process, with the verification in hand (no queue
   * read). Its job was written claimed; a failure here is logged and the job falls due again later.
   */
  sendNow(verification: Verification, sender: string): void {
    const job: SendJob = { verificationId: verification.id, channel: channelFor[verification.type], sender, attempts: 1 };
    const run = this.deliver(job, verification)
      .catch((err: unknown) => this.deps.logger.error({ err, verificationId: verification.id }, 'immediate send failed'))
      .finally(() => this.inFlight.delete(run));
    this.inFlight.add(run);
  }

  /** Waits for the sends started by sendNow (on shutdown). */
  async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /** Processes one batch of due jobs; true when the batch was full (there may be more). */
  async runOnce(): Promise<boolean> {
    const jobs = await this.deps.jobs.claimDue(this.deps.clock.now(), leaseMs, batchSize);
    await Promise.all(jobs.map((job) => this.process(job)));
    return jobs.length === batchSize;
  }

  private async process(job: SendJob): Promise<void> {
    const { deps } = this;
    const verification = await deps.verifications.findById(job.verificationId);
    if (!verification || effectiveStatus(verification, deps.clock.now()) !== 'PENDING') {
      await deps.jobs.complete(job.verificationId, deps.clock.now());
      return;
    }
    await this.deliver(job, verification);
  }

  private async deliver(job: SendJob, verification: Verification): Promise<void> {
    const { deps } = this;
    const result = await this.send(job, verification).catch(
      (err: unknown): SendResult => ({ ok: false, permanent: false, reason: `provider threw: ${String(err)}` }),
    );
    const now = deps.clock.now();
    const log = deps.logger.child({ verificationId: job.verificationId, channel: job.channel, attempt: job.attempts });
    if (result.ok) {
      await deps.jobs.complete(job.verificationId, now);
      log.info({ providerId: result.providerId }, 'code sent');
      return;
    }
    const delay = deps.retryDelays[job.attempts - 1];
    if (!result.permanent && delay !== undefined) {
      await deps.jobs.retryAt(job.verificationId, new Date(now.getTime() + delay * 1000), result.reason, now);
      log.warn({ reason: result.reason, retryInSeconds: delay }, 'send failed; will retry');
      return;
    }
    await deps.jobs.fail(job.verificationId, result.reason, now);
    await deps.service.failDelivery(job.verificationId);
    log.warn({ reason: result.reason, permanent: result.permanent }, 'send failed for good; verification FAILED');
  }

  private send(job: SendJob, v: Verification): Promise<SendResult> {
    return job.channel === 'call'
      ? this.deps.calls.placeCall({ verificationId: v.id, to: v.phoneNumber, callerId: job.sender })
      : this.deps.sms.send({ verificationId: v.id, to: v.phoneNumber, from: job.sender, body: smsText(v), code: v.otp });
  }
}

/** The SMS a user reads. The code comes first so that phones can offer to fill it in. */
export function smsText(v: Verification): string {
  const minutes = Math.max(1, Math.round((v.expiresAt.getTime() - v.createdAt.getTime()) / 60_000));
  return `${v.otp} is your verification code. It expires in ${minutes} minute${minutes === 1 ? '' : 's'}. Do not share it.`;
}
