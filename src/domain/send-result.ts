import type { Money } from './money.js';

/** What a provider answered to one send. Expected outcomes are values; a provider never throws for them. */
export type SendResult =
  /**
   * Accepted: `messageId` is the provider's id, the key its receipts come back under. `delivered`: the provider
   * already knows it arrived (a SIP call whose phone rang before the call was placed and dropped), so no receipt
   * is to come.
   */
  | {
      readonly kind: 'accepted';
      readonly messageId: string;
      readonly delivered?: boolean;
      /** What the provider says the send costs, when its answer says (Vonage's `message-price`, Africa's Talking's `cost`). */
      readonly price?: Money;
    }
  /** Retrying may help (time-out, throttling, 5xx, queue full); `retryAfterSeconds` when the provider said. */
  | { readonly kind: 'transient'; readonly reason: string; readonly retryAfterSeconds?: number }
  /** Retrying through this provider cannot help (invalid or barred number, refused sender, bad credentials). */
  | { readonly kind: 'permanent'; readonly reason: string };

/**
 * A silent step's answer (contract 19, SILENT): nothing was sent, and nothing is to be; the device proves its
 * number itself. The step waits for that proof until `until`, then fails (the workflow's next step, else FAILED
 * UNDELIVERABLE).
 */
export interface AwaitingProof {
  readonly kind: 'awaiting';
  readonly until: Date;
}

/** What a provider answered to one step: a send's result, or (a silent step) the device's proof awaited. */
export type StepAnswer = SendResult | AwaitingProof;

/** A delivery receipt, from a callback or (SMPP) from the bind. */
export interface DeliveryReceipt {
  /** The provider's message id, as in SendResult.accepted. */
  readonly messageId: string;
  /** DELIVERED: reached the phone (a call: it rang); UNDELIVERED: the network gave up; SENT: still on its way. */
  readonly status: 'SENT' | 'DELIVERED' | 'UNDELIVERED';
  /** The provider's own status or error code, for operators. */
  readonly detail: string | null;
  /** When the provider says it happened, if it says. */
  readonly at: Date | null;
  /**
   * The provider gave back what the send cost (the Telegram Gateway refunds a message not delivered within its
   * time to live): the send costs 0 from then on. Absent: no refund.
   */
  readonly refunded?: boolean;
}
