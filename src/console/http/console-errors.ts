import type { FastifyReply } from 'fastify';
import { sendError, type ErrorOptions } from '../../http/envelope.js';
import type { ErrorCode } from '../../domain/error-catalogue.js';

/**
 * The console API's answers in the contract's error shape (section 5). Its one code of its own, for a change
 * that did not come from the console page (no or a wrong CSRF token, a foreign Origin), is console-only: the
 * console is not part of the public API, so it stays out of /v1's catalogue and its OpenAPI document.
 */
export function sendForgedRequest(reply: FastifyReply, why: string): FastifyReply {
  return reply
    .code(403)
    .type('application/json; charset=utf-8')
    .send({ status: false, message: `Refused: ${why}`, error: { code: 'CSRF_REFUSED' } });
}

/** A passkey already registered (to this operator or another): 409, the console's own code, as CSRF_REFUSED is. */
export function sendPasskeyExists(reply: FastifyReply): FastifyReply {
  return reply
    .code(409)
    .type('application/json; charset=utf-8')
    .send({ status: false, message: 'This passkey is already registered', error: { code: 'PASSKEY_ALREADY_REGISTERED' } });
}

/** An error of the catalogue (UNAUTHORIZED, NOT_FOUND, VALIDATION_ERROR, RATE_LIMITED...). */
export function sendConsoleError(reply: FastifyReply, code: ErrorCode, message: string, options: Omit<ErrorOptions, 'message'> = {}): FastifyReply {
  return sendError(reply, code, { ...options, message });
}
