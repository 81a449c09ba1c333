import type { OpenAPIV3_1 } from 'openapi-types';

/** The body of a webhook delivery (contract 4; the outbox stores what domain/events.ts builds), for the reference. */
export const webhookEventSchema: OpenAPIV3_1.SchemaObject = {
  type: 'object',
  required: ['event', 'data'],
  properties: {
    event: { type: 'string', enum: ['action.otp.success', 'action.otp.failed', 'action.otp.expired'] },
    data: {
      type: 'object',
      required: ['id', 'otp', 'type', 'status', 'createdAt', 'countryCode', 'phoneNumber', 'reference', 'failureReason'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', description: 'The verification id.' },
        otp: { type: ['string', 'null'] },
        type: { type: 'string', enum: ['SMS', 'DROPPED_CALL', 'WHATSAPP', 'VOICE_CALL', 'TELEGRAM', 'SILENT'] },
        status: { type: 'string', enum: ['SUCCESS', 'FAILED', 'EXPIRED'] },
        createdAt: { type: 'string', description: 'ISO 8601 UTC with milliseconds.' },
        countryCode: { type: 'string', description: '`+NNN`.' },
        phoneNumber: { type: 'string', description: 'E.164.' },
        reference: { type: ['string', 'null'] },
        failureReason: { type: ['string', 'null'], enum: ['MAX_ATTEMPTS', 'UNDELIVERABLE', 'CANCELED', null] },
      },
    },
  },
  additionalProperties: false,
};
