import type { Channel } from './verification-store.js';

/** The result of handing a message or call to a provider. */
export type SendResult =
  | { readonly ok: true; readonly providerId: string }
  /** `permanent`: retrying cannot help (number unreachable, refused by the provider). */
  | { readonly ok: false; readonly permanent: boolean; readonly reason: string };

/** An SMS to send (port input). */
export interface SmsMessage {
  readonly verificationId: string;
  /** E.164. */
  readonly to: string;
  /** E.164 sender number. */
  readonly from: string;
  readonly body: string;
  /** The code inside `body`, so that a provider can redact it from its logs. */
  readonly code: string;
}

/** A call to place and drop before it is answered (port input). */
export interface DroppedCall {
  readonly verificationId: string;
  /** E.164. */
  readonly to: string;
  /** E.164 caller id whose last digits are the code. */
  readonly callerId: string;
}

/** Sends SMS messages. Implementations must be safe to call again for the same verification. */
export interface SmsSender {
  readonly name: string;
  send(message: SmsMessage): Promise<SendResult>;
}

/** Places dropped calls. Implementations must be safe to call again for the same verification. */
export interface CallPlacer {
  readonly name: string;
  placeCall(call: DroppedCall): Promise<SendResult>;
}

export const channelFor = { SMS: 'sms', DROPPED_CALL: 'call' } as const satisfies Record<string, Channel>;
