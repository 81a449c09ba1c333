import type { SendJob } from '../domain/send-job.js';

/** The durable queue of codes to send, as the send worker uses it (port; SqlSendJobStore implements it). */
export interface SendJobQueue {
  /** Claims due jobs for `leaseMs`: another worker sees them again only if this one dies. */
  claimDue(now: Date, leaseMs: number, limit: number): Promise<SendJob[]>;
}
