import type { FastifyInstance } from 'fastify';
import type { VerificationService } from '../../domain/verification-service.js';
import { grantOf } from '../auth-hook.js';
import { publicRecord, sendError } from '../envelope.js';
import { idParamsSchema, v1Responses } from '../schemas.js';

/** POST /v1/otp/:id/resend and POST /v1/otp/:id/cancel (contract 9): no body. */
export function otpLifecycleRoutes(app: FastifyInstance, verifications: VerificationService): void {
  app.post<{ Params: { id: string } }>(
    '/v1/otp/:id/resend',
    { schema: { params: idParamsSchema, response: v1Responses }, config: { operation: 'resendCode' } },
    async (request, reply) => {
      const outcome = await verifications.resend(grantOf(request).clientId, request.params.id);
      switch (outcome.kind) {
        case 'resent':
          return { status: true, message: 'OTP resent', data: publicRecord(outcome.verification) };
        case 'rate-limited':
          return sendError(reply, 'RATE_LIMITED', {
            message:
              outcome.reason === 'cooldown'
                ? 'The code was sent moments ago; retry later'
                : 'This verification has no send left (OTP_MAX_SENDS); start a new one once it is over',
            retryAfterSeconds: outcome.retryAfterSeconds,
          });
        case 'not-pending':
          return sendError(reply, 'VERIFICATION_NOT_PENDING', {
            message: `The verification is ${outcome.verification.status}`,
            data: outcome.verification,
          });
        case 'not-found':
          return sendError(reply, 'NOT_FOUND', { message: 'Verification not found' });
      }
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/otp/:id/cancel',
    { schema: { params: idParamsSchema, response: v1Responses }, config: { operation: 'cancelVerification' } },
    async (request, reply) => {
      const outcome = await verifications.cancel(grantOf(request).clientId, request.params.id);
      switch (outcome.kind) {
        case 'canceled':
          return { status: true, message: 'Verification cancelled', data: publicRecord(outcome.verification) };
        case 'not-pending':
          return sendError(reply, 'VERIFICATION_NOT_PENDING', {
            message: `The verification is ${outcome.verification.status}`,
            data: outcome.verification,
          });
        case 'not-found':
          return sendError(reply, 'NOT_FOUND', { message: 'Verification not found' });
      }
    },
  );
}
