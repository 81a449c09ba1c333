import type { AttemptRecord } from '../domain/send-error.js';
import type { EventDetailView } from '../webhooks/delivery-log.js';

// Types only, and only of files that import nothing at run time: the console's pages read them too.

/** A verification's whole life as an operator reads it: never its code. */
export interface VerificationLife {
  readonly id: string;
  readonly clientId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly expiresAt: string;
  readonly phoneNumber: string;
  readonly region: string | null;
  readonly type: string;
  readonly status: string;
  readonly failureReason: string | null;
  readonly reference: string | null;
  /** How the fraud and cost rules judged its create: the verdict and each factor named. */
  readonly risk: { readonly verdict: string; readonly factors: readonly { readonly factor: string; readonly rule: string; readonly mode: string }[] };
  readonly webhookUrl: string | null;
  readonly testNumber: boolean;
  /** Wrong codes tried. */
  readonly attempts: number;
  /** Sends asked for (create and resends). */
  readonly sends: number;
  readonly delivery: { channel: string; provider: string | null; status: string; updatedAt: string; attempts: number; lastError: AttemptRecord['lastError'] };
  /** Every provider's turn at a send, oldest first, with its calls and latest failure. */
  readonly deliveries: readonly AttemptRecord[];
  /** Its webhook events with every delivery attempt. */
  readonly webhooks: readonly EventDetailView[];
}
