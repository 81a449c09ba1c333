import type { FastifyInstance } from 'fastify';
import type { SilentService } from '../../domain/silent-service.js';
import { grantOf } from '../auth-hook.js';
import { publicRecord, sendError, sendNotPending, sendVerificationNotFound } from '../envelope.js';
import { examples } from '../api-examples.js';
import { envelopeOf } from '../record-schema.js';
import { idParamsSchema, v1Answers } from '../schemas.js';

/** How soon to ask again when Google's key set did not come in time. */
const keySetRetrySeconds = 5;

const silentTokenSchema = {
  operationId: 'verifySilentToken',
  summary: 'Prove the number with a Firebase PNV token',
  description:
    'For a `SILENT` verification with `SILENT_PROVIDER=firebase`: the token the Firebase Phone Number Verification SDK gave the device, posted by its backend. ' +
    'An ES256 token signed by Google\'s keys for this Firebase project, unexpired, whose `sub` is the verification\'s number makes it `SUCCESS`. ' +
    'Any other token is a 422 `OTP_MISMATCH` and counts as a wrong attempt (`OTP_MAX_ATTEMPTS` turns it `FAILED`). ' +
    'When Google\'s key set cannot be read in time the answer is 503 `UNAVAILABLE` and no attempt is counted.',
  tags: ['Verifications'],
  params: idParamsSchema,
  body: {
    type: 'object',
    required: ['token'],
    properties: { token: { type: 'string', minLength: 1, maxLength: 8192, description: 'The Firebase PNV token (a JWT) of the device.' } },
  },
  response: v1Answers(envelopeOf('Verification successful', examples.success), ['NOT_FOUND', 'OTP_MISMATCH', 'VERIFICATION_NOT_PENDING', 'UNAVAILABLE'], {
    jsonBody: true,
  }),
} as const;

/** POST /v1/otp/:id/silent (contract 19, Firebase Phone Number Verification). */
export function silentRoutes(app: FastifyInstance, silent: SilentService, currency: string): void {
  app.post<{ Params: { id: string }; Body: { token: string } }>(
    '/v1/otp/:id/silent',
    { schema: silentTokenSchema, config: { operation: 'verifyCode' } },
    async (request, reply) => {
      const outcome = await silent.proveWithToken(grantOf(request).clientId, request.params.id, request.body.token);
      switch (outcome.kind) {
        case 'success':
          return { status: true, message: 'Verification successful', data: publicRecord(outcome.verification, currency) };
        case 'mismatch':
          return sendError(reply, 'OTP_MISMATCH', { message: 'The token does not prove the number', data: publicRecord(outcome.verification, currency) });
        case 'not-pending':
          return sendNotPending(reply, outcome.verification, currency);
        case 'not-found':
          return sendVerificationNotFound(reply);
        case 'not-silent':
          return sendError(reply, 'VALIDATION_ERROR', { details: [{ field: 'id', issue: outcome.issue }] });
        case 'unavailable':
          request.log.warn({ reason: outcome.reason }, 'a Firebase PNV token could not be checked');
          return sendError(reply, 'UNAVAILABLE', { message: "Google's key set for Firebase PNV tokens could not be read in time; try again later", retryAfterSeconds: keySetRetrySeconds });
      }
    },
  );
}
