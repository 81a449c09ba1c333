import type { Channel } from '../domain/channel-driver.js';
import type { SendStatus, VerificationStatus } from '../domain/verification.js';

/** Where a verification stands, as the development inbox shows it beside its messages. */
export interface InboxState {
  readonly verificationId: string;
  /** As a client reads it now: a PENDING verification past its time reads EXPIRED. */
  readonly status: VerificationStatus;
  /** `delivery.status` of its latest send. */
  readonly deliveryStatus: SendStatus;
}

/**
 * One SMS or dropped call the `log` provider "sent", as the inbox page and `otp-service messages` show it. JSON
 * as it is (it crosses the admin socket and the page's event stream): it carries the code, which is what the
 * inbox is for, and nothing else that is secret (no client, no token).
 */
export interface InboxMessage {
  /** Increasing with each message stored (the page and the CLI keep their place by it). */
  readonly id: number;
  /** When the provider took it, ISO 8601. */
  readonly at: string;
  readonly channel: Channel;
  /** E.164. */
  readonly to: string;
  /** The SMS or WhatsApp sender, or the number the call came from (VOICE_CALLER_NUMBER for a voice call). */
  readonly from: string;
  /** The SMS or WhatsApp text, or what a voice call says; null for a dropped call. */
  readonly text: string | null;
  /** The number a dropped call came from (its last digits are the code); null for an SMS or a voice call. */
  readonly callerId: string | null;
  /** The verification's code; null when the verification is gone. */
  readonly code: string | null;
  readonly verificationId: string;
  /** The provider that took it: `log`, the only one that keeps what it sends. */
  readonly provider: string;
  /** Whether it went to a client's test number (none exist yet: always false). */
  readonly testNumber: boolean;
  /** Null when the verification is gone. */
  readonly state: InboxState | null;
}

/** What the inbox reads (port; src/store/inbox-store.ts over SQL). */
export interface InboxSource {
  /** The newest `limit` messages, newest first; only those to `to` when given (E.164). */
  latest(limit: number, to: string | null): Promise<InboxMessage[]>;
  /**
   * Messages stored after `afterId`, or at or after `since` (a message whose transaction committed late can
   * carry an id below one already seen), oldest first, at most `limit`.
   */
  recent(afterId: number, since: Date, limit: number, to: string | null): Promise<InboxMessage[]>;
  /** Where these verifications stand now. */
  states(verificationIds: readonly string[]): Promise<InboxState[]>;
}
