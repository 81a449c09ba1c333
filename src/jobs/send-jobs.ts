import type { JobOwnership, SendJob } from '../domain/send-job.js';

/** The durable queue of codes to send, as the send worker uses it (port; SqlSendJobStore implements it). */
export interface SendJobQueue {
  /**
   * Claims due jobs for `leaseMs`: another worker sees them again only if this one dies. Only jobs this worker
   * can send are claimed (`takes`: per channel, the providers it has).
   */
  claimDue(now: Date, leaseMs: number, limit: number, takes: readonly JobOwnership[]): Promise<SendJob[]>;
}
