import { shownCode, type Verification, type VerificationStatus } from './verification.js';

/** Event kinds delivered to webhooks (contract 4). */
export type EventKind = 'action.otp.success' | 'action.otp.failed' | 'action.otp.expired';

/** The event a move into a final state emits; none for PENDING. */
export function eventFor(status: VerificationStatus): EventKind | null {
  switch (status) {
    case 'SUCCESS':
      return 'action.otp.success';
    case 'FAILED':
      return 'action.otp.failed';
    case 'EXPIRED':
      return 'action.otp.expired';
    case 'PENDING':
      return null;
  }
}

/** The webhook body (seed 2.4 plus reference). */
export interface WebhookPayload {
  readonly event: EventKind;
  readonly data: {
    readonly id: string;
    /** Null when the client withholds codes (contract 9). */
    readonly otp: string | null;
    readonly type: string;
    readonly status: VerificationStatus;
    readonly createdAt: string;
    readonly countryCode: string;
    readonly phoneNumber: string;
    readonly reference: string | null;
    /** Why it is FAILED (contract 4); null otherwise, and in events recorded before it was added. */
    readonly failureReason: string | null;
  };
}

export function webhookPayload(event: EventKind, v: Verification): WebhookPayload {
  return {
    event,
    data: {
      id: v.id,
      otp: shownCode(v),
      type: v.type,
      status: v.status,
      createdAt: v.createdAt.toISOString(),
      countryCode: v.countryCode,
      phoneNumber: v.phoneNumber,
      reference: v.reference,
      failureReason: v.failureReason,
    },
  };
}

/** An event to record in the outbox, in the same transaction as the state change that caused it. */
export interface OutboxEvent {
  readonly id: string;
  readonly clientId: string;
  readonly verificationId: string;
  readonly kind: EventKind;
  readonly payload: WebhookPayload;
  readonly webhookUrl: string | null;
  readonly createdAt: Date;
  /**
   * Held for the process that wrote it until then: it makes the first delivery attempt itself, as attempt 1
   * (see AfterCommit). Null: due at once for any worker (or never, without a webhookUrl).
   */
  readonly claimedUntil: Date | null;
  /**
   * The verification's latest send when the event was made (its provider and that provider's message id), for
   * what its end sets going after the commit (a Telegram message revoked); not stored, so absent on a replay.
   */
  readonly lastSend?: { readonly provider: string | null; readonly messageId: string | null };
}
