import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { UnavailableError } from '../../domain/unavailable.js';

/** The relays' own error body where the sender defines none (Logto, Kratos, ZITADEL): `{ code, message }`. */
export const relayErrorBody = { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } } as const;

export function codeOf(status: number): string {
  const codes: Record<number, string> = { 400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 413: 'PAYLOAD_TOO_LARGE', 429: 'RATE_LIMITED', 503: 'UNAVAILABLE' };
  return codes[status] ?? 'INTERNAL_ERROR';
}

export function relayError(
  error: FastifyError | UnavailableError,
  request: FastifyRequest,
  reply: FastifyReply,
  fail: (status: number, message: string, retryAfterSeconds?: number) => FastifyReply,
): FastifyReply {
  if (error instanceof UnavailableError) return fail(503, 'The service is temporarily unavailable', error.retryAfterSeconds);
  if (error.validation) return fail(400, `The body is not what the sender sends: ${error.validation[0]?.message ?? 'invalid'}`);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return fail(error.statusCode === 415 ? 400 : error.statusCode, error.message);
  request.log.error({ err: error }, 'unexpected error');
  void reply;
  return fail(500, 'Internal error');
}
