import type { FastifyInstance } from 'fastify';
import type { VerificationService } from '../../domain/verification-service.js';
import type { WebhookEventWithAttempts } from '../../domain/webhook-delivery.js';
import { clientEventView } from '../../webhooks/delivery-log.js';
import { grantOf } from '../auth-hook.js';
import { sendError } from '../envelope.js';
import { idParamsSchema, v1Responses } from '../schemas.js';

export interface WebhookRouteDeps {
  readonly verifications: VerificationService;
  /** A verification's events with their attempts. */
  readonly deliveries: { forVerification(verificationId: string): Promise<WebhookEventWithAttempts[]> };
  readonly now: () => Date;
}

const nullable = (type: string) => ({ type: [type, 'null'] }) as const;

const attemptSchema = {
  type: 'object',
  properties: {
    attempt: { type: 'integer' },
    attemptedAt: { type: 'string' },
    outcome: { type: 'string' },
    statusCode: nullable('integer'),
    error: nullable('string'),
    durationMs: nullable('integer'),
    nextAttemptAt: nullable('string'),
  },
} as const;

/** What a client sees of a delivery: never the signature, the secret or another client's data. */
const deliverySchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    event: { type: 'string' },
    verificationId: { type: 'string' },
    webhookUrl: nullable('string'),
    deliveryStatus: { type: 'string' },
    attemptCount: { type: 'integer' },
    inFlight: { type: 'boolean' },
    nextAttemptAt: nullable('string'),
    deliveredAt: nullable('string'),
    lastError: nullable('string'),
    createdAt: { type: 'string' },
    attempts: { type: 'array', items: attemptSchema },
  },
} as const;

const responses = {
  ...v1Responses,
  200: {
    type: 'object',
    properties: {
      status: { type: 'boolean' },
      message: { type: 'string' },
      data: { type: 'array', items: deliverySchema },
    },
  },
} as const;

/** GET /v1/otp/:id/webhooks: the webhook delivery log of one of the client's verifications. */
export function webhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/otp/:id/webhooks',
    { schema: { params: idParamsSchema, response: responses }, config: { operation: 'fetchVerification' } },
    async (request, reply) => {
      const verification = await deps.verifications.fetch(grantOf(request).clientId, request.params.id);
      if (!verification) return sendError(reply, 'NOT_FOUND', { message: 'Verification not found' });
      const events = await deps.deliveries.forVerification(verification.id);
      const now = deps.now();
      return {
        status: true,
        message: 'Webhook deliveries fetched',
        data: events.map((e) => clientEventView(e, now)),
      };
    },
  );
}
