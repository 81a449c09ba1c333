import type { FastifyInstance } from 'fastify';
import type { PersonalDataStore } from '../../domain/personal-data.js';
import type { VerificationService } from '../../domain/verification-service.js';
import { grantOf } from '../auth-hook.js';
import { examples } from '../api-examples.js';
import { publicRecord, sendError, sendNotPending, sendVerificationNotFound } from '../envelope.js';
import { envelopeOf } from '../record-schema.js';
import { idParamsSchema, v1Answers } from '../schemas.js';
import { sendCaptchaRefusal, sendLimited, sendNotAllowed } from '../refusals.js';

const tags = ['Verifications'];

const resendSchema = {
  operationId: 'resendCode',
  summary: 'Send the code again',
  description:
    'Sends the same code again through the channel that carries it (a dropped call comes from the same caller id), from the channel\'s first provider. ' +
    'At most `OTP_MAX_SENDS` sends per verification (default 3, the first included), and no sooner than `PHONE_COOLDOWN_SECONDS` after the last: ' +
    'otherwise a 429 whose `Retry-After` says when (for no send left: when the verification ends). While the client\'s resends are seldom verified (`MIN_RESEND_SAMPLE`), a code of a user with no verified history is resent at most `UNKNOWN_USER_RESENDS` times (none when it was asked for from an address in another country than its number\'s: `IP_COUNTRY_DATABASE`), then 429 until it ends. ' +
    'A client with `--captcha-when throttled` is answered 403 CAPTCHA_REQUIRED instead, from the first such resend, and the resend sent again with an optional JSON body `{ "captchaToken": "..." }` goes past it. ' +
    'Carrier checks are heard as on a create: a recent SIM swap asks the client\'s CAPTCHA (403 CAPTCHA_REQUIRED with the factor `sim_swap_recent`, passed with the same body), and a call\'s code to a line whose calls are forwarded is 403 NUMBER_NOT_ALLOWED with the factor `call_forwarding_active` (a resend keeps its channel). ' +
    'A verification no longer `PENDING` is a 409 with the record. No body otherwise.',
  tags,
  params: idParamsSchema,
  response: v1Answers(
    envelopeOf('OTP resent', examples.pending),
    ['NOT_FOUND', 'VERIFICATION_NOT_PENDING', 'RATE_LIMITED', 'CAPTCHA_REQUIRED', 'CAPTCHA_FAILED', 'NUMBER_NOT_ALLOWED', 'UNAVAILABLE'],
    { jsonBody: false },
  ),
} as const;

const cancelSchema = {
  operationId: 'cancelVerification',
  summary: 'Cancel a verification',
  description:
    'Ends a `PENDING` verification: `FAILED` with `failureReason` `CANCELED`, and the event `action.otp.failed` to its webhook. ' +
    'A send not yet made is not made. A verification no longer `PENDING` is a 409 with the record. No body.',
  tags,
  params: idParamsSchema,
  response: v1Answers(envelopeOf('Verification cancelled', examples.canceled), ['NOT_FOUND', 'VERIFICATION_NOT_PENDING'], { jsonBody: false }),
} as const;

const eraseSchema = {
  operationId: 'eraseVerification',
  summary: "Erase a verification's personal data",
  description:
    "Removes what the verification holds of a person: its number (kept only as its prefix, for the service's counts), its code, reference and signals, the texts sent and its webhook events. " +
    'A `PENDING` verification ends first: nothing more is sent for it, and no event goes out. It then reads 404, as one that never existed. 204 with no body; 404 for one not found or erased already.',
  tags,
  params: idParamsSchema,
  response: v1Answers({ type: 'null', description: 'Erased' }, ['NOT_FOUND'], { jsonBody: false, status: 204 }),
} as const;

/** POST /v1/otp/:id/resend, POST /v1/otp/:id/cancel (contract 9) and DELETE /v1/otp/:id (contract 20): no body. */
export function otpLifecycleRoutes(app: FastifyInstance, verifications: VerificationService, personalData: PersonalDataStore, currency: string): void {
  app.post<{ Params: { id: string } }>(
    '/v1/otp/:id/resend',
    { schema: resendSchema, config: { operation: 'resendCode' } },
    async (request, reply) => {
      // The body is optional (no schema: Fastify would refuse a resend without one); only its token is read.
      const body: unknown = request.body;
      const token = typeof body === 'object' && body !== null && 'captchaToken' in body ? body.captchaToken : undefined;
      if (token !== undefined && (typeof token !== 'string' || token.length < 1 || token.length > 4096)) {
        return sendError(reply, 'VALIDATION_ERROR', { details: [{ field: 'captchaToken', issue: 'must be a text of 1 to 4096 characters' }] });
      }
      const outcome = await verifications.resend(grantOf(request).clientId, request.params.id, token ?? null);
      switch (outcome.kind) {
        case 'resent':
          return { status: true, message: 'OTP resent', data: publicRecord(outcome.verification, currency) };
        case 'rate-limited':
          return sendLimited(reply, outcome);
        case 'captcha':
          return sendCaptchaRefusal(reply, outcome);
        case 'not-allowed':
          return sendNotAllowed(reply, outcome);
        case 'not-pending':
          return sendNotPending(reply, outcome.verification, currency);
        case 'not-found':
          return sendVerificationNotFound(reply);
      }
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/otp/:id/cancel',
    { schema: cancelSchema, config: { operation: 'cancelVerification' } },
    async (request, reply) => {
      const outcome = await verifications.cancel(grantOf(request).clientId, request.params.id);
      switch (outcome.kind) {
        case 'canceled':
          return { status: true, message: 'Verification cancelled', data: publicRecord(outcome.verification, currency) };
        case 'not-pending':
          return sendNotPending(reply, outcome.verification, currency);
        case 'not-found':
          return sendVerificationNotFound(reply);
      }
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/otp/:id',
    { schema: eraseSchema, config: { operation: 'eraseVerification' } },
    async (request, reply) => {
      const erased = await personalData.erase({ kind: 'verification', clientId: grantOf(request).clientId, id: request.params.id });
      if (erased.verifications === 0) return sendVerificationNotFound(reply);
      return reply.code(204).send();
    },
  );
}
