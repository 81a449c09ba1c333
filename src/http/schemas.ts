/** JSON Schemas of the /v1 routes: they parse input and, as response schemas, decide what may leave. */

const nullableString = { type: ['string', 'null'] } as const;

export const recordSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    expiresAt: { type: 'string' },
    otp: { type: 'string' },
    phoneNumber: { type: 'string' },
    country: { type: 'string' },
    countryCode: { type: 'string' },
    counter: { type: 'integer' },
    pairedNumber: { type: 'string' },
    type: { type: 'string' },
    status: { type: 'string' },
    webhookUrl: nullableString,
    reference: nullableString,
    failureReason: nullableString,
    delivery: {
      type: 'object',
      properties: {
        channel: { type: 'string' },
        provider: nullableString,
        status: { type: 'string' },
        sends: { type: 'integer' },
        updatedAt: { type: 'string' },
      },
    },
  },
} as const;

const errorSchema = {
  type: 'object',
  properties: {
    status: { type: 'boolean' },
    message: { type: 'string' },
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        details: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, issue: { type: 'string' } } },
        },
      },
    },
    data: recordSchema,
  },
} as const;

export const envelopeSchema = {
  type: 'object',
  properties: { status: { type: 'boolean' }, message: { type: 'string' }, data: recordSchema },
} as const;

/** Every status a /v1 route answers with, so that each body goes through a serializer. */
export const v1Responses = {
  200: envelopeSchema,
  '4xx': errorSchema,
  '5xx': errorSchema,
} as const;

export const createBodySchema = {
  type: 'object',
  required: ['countryCode', 'phoneNumber'],
  properties: {
    countryCode: { type: 'string', pattern: '^\\+[1-9][0-9]{0,2}$' },
    phoneNumber: { type: 'string', pattern: '^[0-9]{1,17}$' },
    type: { type: 'string', enum: ['SEND_SMS', 'DROPPED_CALL'] },
    webhookUrl: { type: ['string', 'null'], maxLength: 2048 },
    reference: { type: ['string', 'null'], maxLength: 256 },
  },
} as const;

export const verifyBodySchema = {
  type: 'object',
  required: ['id', 'otp'],
  properties: {
    id: { type: 'string' },
    otp: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

export const idParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' } },
} as const;
