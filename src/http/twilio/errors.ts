import type { FastifyReply } from 'fastify';

/**
 * Twilio's error codes that the Twilio-shaped surface answers with (contract 15), each with its HTTP status and
 * Twilio's own wording (https://www.twilio.com/docs/api/errors). The one table behind /v2's errors.
 */
export const twilioErrors = {
  /** Wrong or missing credentials, or a disabled client. */
  20003: { status: 401, message: 'Authentication Error - invalid username' },
  /** Unknown sid, another client's sid, a verification no longer pending, an unknown route. */
  20404: { status: 404, message: 'The requested resource was not found' },
  /** The client is not registered for the scope the operation needs (otp:send, otp:verify). */
  20403: { status: 403, message: 'Forbidden: this client is not allowed this operation' },
  /** The body is over the limit (Twilio's "Request Entity Too Large"). */
  20413: { status: 413, message: 'Request Entity Too Large' },
  /** The body is not a form. */
  20415: { status: 415, message: 'Unsupported Media Type: send an application/x-www-form-urlencoded body' },
  /** CLIENT_RATE_LIMIT_PER_SECOND, the daily quota, a throttled country, or repeated failed authentication. */
  20429: { status: 429, message: 'Too Many Requests' },
  20500: { status: 500, message: 'Internal Server Error' },
  /** The database did not answer in time; nothing was half done. */
  20503: { status: 503, message: 'Service Unavailable' },
  /** A missing or malformed parameter. */
  60200: { status: 400, message: 'Invalid parameter' },
  /** Every check attempt was used (OTP_MAX_ATTEMPTS). */
  60202: { status: 429, message: 'Max check attempts reached' },
  /** The number's own limits (PHONE_LIMIT_COUNT, PHONE_COOLDOWN_SECONDS). */
  60203: { status: 429, message: 'Max send attempts reached' },
  /** A channel this service has no provider for. */
  60223: { status: 400, message: 'Delivery channel disabled' },
  /** A destination refused by contract 10 (country, line type, blocked prefix). */
  60410: { status: 403, message: 'Verification delivery attempt blocked' },
} as const satisfies Record<number, { status: number; message: string }>;

export type TwilioErrorCode = keyof typeof twilioErrors;

/** Twilio's error body, `{ code, message, more_info, status }`. */
export interface TwilioErrorBody {
  code: number;
  message: string;
  more_info: string;
  status: number;
}

export function twilioErrorBody(code: TwilioErrorCode, message?: string): TwilioErrorBody {
  const entry = twilioErrors[code];
  // more_info names Twilio's own page for the code: the SDKs show it, and it is that code's documentation.
  return { code, message: message ?? entry.message, more_info: `https://www.twilio.com/docs/errors/${code}`, status: entry.status };
}

export function sendTwilioError(
  reply: FastifyReply,
  code: TwilioErrorCode,
  options: { readonly message?: string; readonly retryAfterSeconds?: number } = {},
): FastifyReply {
  const body = twilioErrorBody(code, options.message);
  if (options.retryAfterSeconds !== undefined) reply.header('retry-after', String(options.retryAfterSeconds));
  return reply.code(body.status).type('application/json; charset=utf-8').send(body);
}
