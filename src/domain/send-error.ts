/** The failures of provider calls as records show them; apart from the record's module so the console reads its types. */

/** Why a provider call for a send failed, in the service's words (never a provider credential). */
export type SendErrorCode =
  /** No answer, a time-out, throttling, a 5xx or a full queue: retried. */
  | 'PROVIDER_UNAVAILABLE'
  /** The provider refused it (an invalid or barred number, a refused sender, bad credentials): the next provider. */
  | 'PROVIDER_REFUSED'
  /** The provider took it, and its receipt said it never reached the phone. */
  | 'UNDELIVERED';

export interface SendError {
  readonly code: SendErrorCode;
  readonly message: string;
  readonly at: Date;
}

/** The longest error message a record keeps: a provider's own text can be long. */
export const sendErrorMessageLimit = 300;

/** A provider's failure as a record shows it. */
export function sendError(code: SendErrorCode, message: string, at: Date): SendError {
  return { code, message: message.length > sendErrorMessageLimit ? `${message.slice(0, sendErrorMessageLimit - 1)}…` : message, at };
}

/** One turn as a record shows it, and as it is stored (times in ISO 8601). */
export interface AttemptRecord {
  readonly channel: string;
  readonly provider: string;
  readonly status: string;
  readonly at: string;
  readonly attempts: number;
  readonly lastError: { readonly code: SendErrorCode; readonly message: string; readonly at: string } | null;
  /** In COST_CURRENCY, a decimal string; null: unknown, or no provider took it. */
  readonly cost: string | null;
}

/** A send error as a record shows it (its time in ISO 8601). */
export function sendErrorRecord(e: SendError | null): AttemptRecord['lastError'] {
  return e && { code: e.code, message: e.message, at: e.at.toISOString() };
}
