import type { ErrorCode, ErrorDetail, TokenErrorCode, VerificationRecord } from './types.js';

/**
 * Every /v1 error code, as a value: an answer is read against it at run time. Typed as a record of the codes
 * the generated document names, so a code added to (or dropped from) the service fails to compile here once
 * api.ts is regenerated.
 */
const knownCodes: Readonly<Record<ErrorCode, true>> = {
  VALIDATION_ERROR: true,
  INVALID_PHONE_NUMBER: true,
  UNAUTHORIZED: true,
  INSUFFICIENT_SCOPE: true,
  NUMBER_NOT_ALLOWED: true,
  CAPTCHA_REQUIRED: true,
  CAPTCHA_FAILED: true,
  CALLBACK_FORBIDDEN: true,
  NOT_FOUND: true,
  VERIFICATION_NOT_PENDING: true,
  IDEMPOTENCY_KEY_REUSED: true,
  BAD_REQUEST: true,
  REQUEST_TIMEOUT: true,
  PAYLOAD_TOO_LARGE: true,
  UNSUPPORTED_MEDIA_TYPE: true,
  HEADERS_TOO_LARGE: true,
  OTP_MISMATCH: true,
  RATE_LIMITED: true,
  INTERNAL_ERROR: true,
  UNAVAILABLE: true,
};

const knownTokenCodes: Readonly<Record<TokenErrorCode, true>> = {
  invalid_request: true,
  invalid_client: true,
  invalid_scope: true,
  unsupported_grant_type: true,
  slow_down: true,
  server_error: true,
  temporarily_unavailable: true,
};

/**
 * What an answer that is not in the service's error shape is given as code: a proxy's HTML page, a body cut
 * short, a code this version of the client does not know (its text is kept in `message`).
 */
export const unexpectedResponse = 'UNEXPECTED_RESPONSE';

/** A /v1 error code, or `UNEXPECTED_RESPONSE` for an answer not in the service's error shape. */
export type OtpErrorCode = ErrorCode | typeof unexpectedResponse;

/**
 * A /v1 operation answered with an error (contract 5). Switch on `code`; `data` is the verification where the
 * service sends it (`OTP_MISMATCH`, `VERIFICATION_NOT_PENDING`).
 */
export class OtpServiceError extends Error {
  override readonly name = 'OtpServiceError';
  constructor(
    /** The HTTP status. */
    readonly status: number,
    readonly code: OtpErrorCode,
    message: string,
    /** What was wrong, one entry per field or rule; empty when the service gave none. */
    readonly details: readonly ErrorDetail[],
    readonly data: VerificationRecord | undefined,
    /** The `Retry-After` of a 429 or 503 the client gave up waiting for, in seconds; else null. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** The token endpoint refused the client's credentials or scopes (RFC 6749 5.2): not retried. */
export class OtpAuthError extends Error {
  override readonly name = 'OtpAuthError';
  constructor(
    readonly status: number,
    /** The RFC 6749 `error`, or `UNEXPECTED_RESPONSE`. */
    readonly code: TokenErrorCode | typeof unexpectedResponse,
    /** The RFC 6749 `error_description`, or what was wrong with the answer. */
    message: string,
  ) {
    super(message);
  }
}

/** The service could not be reached, or did not answer within the time-out, after the retries allowed. */
export class OtpConnectionError extends Error {
  override readonly name = 'OtpConnectionError';
  constructor(
    message: string,
    /** True when the last attempt ran out of time (`timeoutMs`). */
    readonly timedOut: boolean,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(knownCodes, value);
}

function isTokenErrorCode(value: unknown): value is TokenErrorCode {
  return typeof value === 'string' && Object.hasOwn(knownTokenCodes, value);
}

function detailsOf(value: unknown): ErrorDetail[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((d) => ({
    ...(typeof d.field === 'string' && { field: d.field }),
    ...(typeof d.issue === 'string' && { issue: d.issue }),
  }));
}

/** A record in an error body: checked for the fields a caller switches on, the rest is the service's schema. */
function recordOf(value: unknown): VerificationRecord | undefined {
  if (!isObject(value) || typeof value.id !== 'string' || typeof value.status !== 'string') return undefined;
  // The service serializes `data` with the VerificationRecord schema the types are generated from.
  return value as VerificationRecord;
}

/** The error a /v1 answer with this status and (parsed, or raw text) body stands for. */
export function serviceErrorFrom(status: number, body: unknown, retryAfterSeconds: number | null): OtpServiceError {
  if (isObject(body) && body.status === false && isObject(body.error) && typeof body.message === 'string') {
    const { code } = body.error;
    if (isErrorCode(code)) {
      return new OtpServiceError(status, code, body.message, detailsOf(body.error.details), recordOf(body.data), retryAfterSeconds);
    }
    const told = typeof code === 'string' ? ` (code ${code})` : '';
    return new OtpServiceError(status, unexpectedResponse, `${body.message}${told}`, [], recordOf(body.data), retryAfterSeconds);
  }
  return new OtpServiceError(status, unexpectedResponse, `HTTP ${status}: ${excerpt(body)}`, [], undefined, retryAfterSeconds);
}

/** The error a token endpoint answer that is not a 200 stands for. */
export function authErrorFrom(status: number, body: unknown): OtpAuthError {
  if (isObject(body) && isTokenErrorCode(body.error)) {
    const description = typeof body.error_description === 'string' ? body.error_description : body.error;
    return new OtpAuthError(status, body.error, description);
  }
  return new OtpAuthError(status, unexpectedResponse, `token endpoint answered HTTP ${status}: ${excerpt(body)}`);
}

/** The start of a body that is not in the expected shape, for a message. */
function excerpt(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body) ?? '';
  return text.length > 200 ? `${text.slice(0, 200)}...` : text || '(empty body)';
}
