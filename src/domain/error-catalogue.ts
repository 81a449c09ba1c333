/**
 * Every error code the /v1 API answers with, its HTTP status and the text a client reads.
 * The one table behind contract section 5.
 */
export const errorCatalogue = {
  /** Malformed JSON, a missing or ill-typed field; details name each field. */
  VALIDATION_ERROR: { status: 400, message: 'The request is invalid' },
  /** The number is not a valid number for the country code given. */
  INVALID_PHONE_NUMBER: { status: 400, message: 'The phone number is not valid for that country code' },
  /** No bearer token, or a malformed, expired or revoked one. */
  UNAUTHORIZED: { status: 401, message: 'A valid access token is required' },
  /** The token lacks the scope the operation needs. */
  INSUFFICIENT_SCOPE: { status: 403, message: 'The access token lacks the scope this operation needs' },
  /** A provider callback whose signature (or secret) is missing, wrong or stale (contract 8). */
  CALLBACK_FORBIDDEN: { status: 403, message: 'The callback is not signed by the provider' },
  /** Unknown id, another client's id, unknown route. */
  NOT_FOUND: { status: 404, message: 'Not found' },
  /** The verification is SUCCESS, FAILED or EXPIRED. */
  VERIFICATION_NOT_PENDING: { status: 409, message: 'The verification is no longer pending' },
  /** The Idempotency-Key was used before with a different body. */
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    message: 'This Idempotency-Key was already used with a different request',
  },
  /** The request line or headers could not be parsed (contract 5): malformed, or Content-Length with Transfer-Encoding. */
  BAD_REQUEST: { status: 400, message: 'The HTTP request is malformed' },
  /** The request was not received within HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS (contract 6). */
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time' },
  /** The body is over the size limit. */
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  /** The body is not JSON. */
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be application/json' },
  /** The request headers are over the HTTP server's limit. */
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large' },
  /** The code does not match. */
  OTP_MISMATCH: { status: 422, message: 'The code does not match' },
  /** The destination is refused (contract 10: countries, number types, blocked prefixes); details say which. */
  NUMBER_NOT_ALLOWED: { status: 403, message: 'This destination is not allowed' },
  /** The client has a CAPTCHA (contract 14) and the create carried no `captchaToken`. */
  CAPTCHA_REQUIRED: { status: 403, message: 'A CAPTCHA token (captchaToken) is required for this client' },
  /** The CAPTCHA provider refused the token, its score was under the client's minimum, or the token was used before. */
  CAPTCHA_FAILED: { status: 403, message: 'The CAPTCHA token was not accepted' },
  /** A rate limit was hit; Retry-After says when to come back. */
  RATE_LIMITED: { status: 429, message: 'Too many requests' },
  /** Anything unexpected; logged with the request id. */
  INTERNAL_ERROR: { status: 500, message: 'Internal error' },
  /** The database did not answer in time (DATABASE_TIMEOUT_MS); nothing was half done; Retry-After says when to come back. */
  UNAVAILABLE: { status: 503, message: 'The service is temporarily unavailable; try again later' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** One problem with one field of a request. */
export interface FieldProblem {
  readonly field: string;
  readonly issue: string;
}

/** A rule that refused a request and the value it refused (a block list entry: contract 14). */
export interface RuleProblem {
  readonly rule: string;
  readonly value: string;
}

/** A country throttle that refused a send (contracts 10, 18): its country, and its mobile network where it is one network's. */
export interface ThrottleProblem {
  readonly rule: 'conversion';
  readonly regionCode: string;
  readonly carrier?: string;
}

/** A budget that refused a send (contract 17): its period's limit and what is spent in it. */
export interface BudgetProblem {
  readonly rule: 'budget';
  readonly period: 'day' | 'month';
  readonly limit: string;
  readonly spent: string;
}
