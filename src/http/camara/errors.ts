import type { FastifyReply } from 'fastify';

/**
 * The error codes of CAMARA's one-time-password-sms v1 description (1.1.1) that this service answers with, each
 * with its HTTP status and the description's own wording. The one table behind the surface's errors.
 */
export const camaraErrors = {
  INVALID_ARGUMENT: { status: 400, message: 'Client specified an invalid argument, request body or query param.' },
  'ONE_TIME_PASSWORD_SMS.VERIFICATION_FAILED': {
    status: 400,
    message: 'The maximum number of attempts for this authenticationId was exceeded without providing a valid OTP',
  },
  'ONE_TIME_PASSWORD_SMS.VERIFICATION_EXPIRED': { status: 400, message: 'The authenticationId is no longer valid' },
  'ONE_TIME_PASSWORD_SMS.INVALID_OTP': { status: 400, message: 'The provided OTP is not valid for this authenticationId' },
  UNAUTHENTICATED: { status: 401, message: 'Request not authenticated due to missing, invalid, or expired credentials.' },
  PERMISSION_DENIED: { status: 403, message: 'Client does not have sufficient permissions to perform this action.' },
  'ONE_TIME_PASSWORD_SMS.MAX_OTP_CODES_EXCEEDED': { status: 403, message: 'Too many OTPs have been requested for this MSISDN. Try later.' },
  'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_NOT_ALLOWED': {
    status: 403,
    message: "Phone_number can't receive an SMS due to business reasons in the operator.",
  },
  'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_BLOCKED': {
    status: 403,
    message: 'Phone_number is blocked to receive SMS due to any blocking business reason in the operator.',
  },
  NOT_FOUND: { status: 404, message: 'The specified resource is not found.' },
  QUOTA_EXCEEDED: { status: 429, message: 'Out of resource quota.' },
  TOO_MANY_REQUESTS: { status: 429, message: 'Rate limit reached.' },
  // Not in the description's operations (CAMARA_common's generic codes): nothing expected leads here.
  INTERNAL: { status: 500, message: 'Unknown server error. Typically a server bug.' },
  // A body over the limit: HTTP's own status in the surface's shape (no CAMARA code names it).
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  UNAVAILABLE: { status: 503, message: 'Service Unavailable.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type CamaraErrorCode = keyof typeof camaraErrors;

export function sendCamaraError(
  reply: FastifyReply,
  code: CamaraErrorCode,
  options: { readonly message?: string; readonly retryAfterSeconds?: number } = {},
): FastifyReply {
  const { status, message } = camaraErrors[code];
  if (options.retryAfterSeconds !== undefined) reply.header('retry-after', String(options.retryAfterSeconds));
  return reply.code(status).type('application/json; charset=utf-8').send({ status, code, message: options.message ?? message });
}
