import type { Channel } from './channel-driver.js';

/** The durable job that sends one verification's code (one row per verification). */
export interface SendJob {
  readonly verificationId: string;
  /** The channel it was written with; a job keeps it for good. */
  readonly channel: Channel;
  /** E.164 the code is sent from: the SMS sender, or the caller id whose last digits are the code. */
  readonly sender: string;
  /** Attempts so far, the one under way included. */
  readonly attempts: number;
  /**
   * Held for the process that wrote it until then (it makes the first attempt itself, as attempt 1); null:
   * due at once for any worker.
   */
  readonly claimedUntil: Date | null;
  readonly createdAt: Date;
}
