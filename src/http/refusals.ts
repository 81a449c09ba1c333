import type { FastifyReply } from 'fastify';
import type { FactorEntry } from '../domain/risk.js';
import type { CaptchaRefusal, CreateOutcome, ResendOutcome } from '../domain/verification-service.js';
import { sendError } from './envelope.js';
import { rateLimitMessages } from './rate-limit-messages.js';

type Limited = Extract<CreateOutcome | ResendOutcome, { kind: 'rate-limited' }>;

/** 429 RATE_LIMITED of a create or resend: the limit's message, its Retry-After, a budget's figures and the factors. */
export function sendLimited(reply: FastifyReply, outcome: Limited): FastifyReply {
  return sendError(reply, 'RATE_LIMITED', {
    message: rateLimitMessages[outcome.reason],
    retryAfterSeconds: outcome.retryAfterSeconds,
    details: [
      ...(outcome.budget ? [{ rule: 'budget' as const, ...outcome.budget }] : []),
      ...('throttled' in outcome && outcome.throttled ? [{ rule: 'conversion' as const, ...outcome.throttled }] : []),
      ...outcome.factors,
    ],
  });
}

/** A CAPTCHA not passed: 403 CAPTCHA_REQUIRED or CAPTCHA_FAILED with the factors, or 503 when its provider did not answer. */
export function sendCaptchaRefusal(reply: FastifyReply, outcome: CaptchaRefusal): FastifyReply {
  if (outcome.outcome === 'unavailable') {
    return sendError(reply, 'UNAVAILABLE', { message: "The client's CAPTCHA provider did not answer in time; try again later", retryAfterSeconds: 5 });
  }
  return sendError(reply, outcome.outcome === 'required' ? 'CAPTCHA_REQUIRED' : 'CAPTCHA_FAILED', { details: outcome.factors });
}

/** 403 NUMBER_NOT_ALLOWED of a create or resend refused by a rule: why, for the number, and the factors. */
export function sendNotAllowed(reply: FastifyReply, outcome: { readonly detail: string; readonly factors: readonly FactorEntry[] }): FastifyReply {
  return sendError(reply, 'NUMBER_NOT_ALLOWED', { details: [{ field: 'phoneNumber', issue: outcome.detail }, ...outcome.factors] });
}
