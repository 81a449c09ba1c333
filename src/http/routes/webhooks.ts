import type { FastifyInstance } from 'fastify';
import type { VerificationService } from '../../domain/verification-service.js';
import type { WebhookEventWithAttempts } from '../../domain/webhook-delivery.js';
import { clientEventView } from '../../webhooks/delivery-log.js';
import { grantOf } from '../auth-hook.js';
import { sendVerificationNotFound } from '../envelope.js';
import { idParamsSchema, v1Answers } from '../schemas.js';

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
    outcome: { type: 'string', enum: ['delivered', 'failed', 'interrupted'], description: '`interrupted`: the worker stopped before it could tell.' },
    statusCode: nullable('integer'),
    error: { ...nullable('string'), description: 'What went wrong, as a client may read it (never how the resolver answered).' },
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
    deliveryStatus: {
      type: 'string',
      enum: ['pending', 'delivered', 'failed', 'none'],
      description: '`failed`: given up after the last retry; `none`: no webhook address, kept as a record only.',
    },
    attemptCount: { type: 'integer' },
    inFlight: { type: 'boolean' },
    nextAttemptAt: nullable('string'),
    deliveredAt: nullable('string'),
    lastError: nullable('string'),
    createdAt: { type: 'string' },
    attempts: { type: 'array', items: attemptSchema },
  },
} as const;

const deliveriesSchema = {
  operationId: 'getVerificationWebhooks',
  summary: 'Webhook deliveries of a verification',
  description:
    'Each event recorded for the verification and every attempt to deliver it: when, the status code or error, how long it took, and when the next attempt is due. ' +
    'Never the signature or the secret. `id` is the `webhook-id` header of the deliveries.',
  tags: ['Webhooks'],
  params: idParamsSchema,
  response: v1Answers(
    {
      type: 'object',
      required: ['status', 'message', 'data'],
      properties: {
        status: { type: 'boolean', enum: [true] },
        message: { type: 'string' },
        data: { type: 'array', items: deliverySchema },
      },
    },
    ['NOT_FOUND'],
    { jsonBody: false },
  ),
} as const;

/** GET /v1/otp/:id/webhooks: the webhook delivery log of one of the client's verifications. */
export function webhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/otp/:id/webhooks',
    { schema: deliveriesSchema, config: { operation: 'fetchVerification' } },
    async (request, reply) => {
      const verification = await deps.verifications.fetch(grantOf(request).clientId, request.params.id);
      if (!verification) return sendVerificationNotFound(reply);
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
