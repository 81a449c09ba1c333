import { examples } from './api-examples.js';
import type { ErrorCode } from '../domain/error-catalogue.js';
import { bodyErrors, errorResponses, errorSchema, v1CommonErrors } from './error-responses.js';
import { envelopeSchema } from './record-schema.js';

// Where they were before they moved beside the shared record schema.
export { envelopeSchema, recordSchema } from './record-schema.js';

/**
 * JSON Schemas of the /v1 routes: they parse input and, as response schemas, decide what may leave. Their
 * descriptions and examples are the API reference (/openapi.json); annotations change neither validation nor
 * serialization.
 */

/** Every status a /v1 route answers with, so that each body goes through a serializer. */
export const v1Responses = {
  200: envelopeSchema,
  '4xx': errorSchema,
  '5xx': errorSchema,
} as const;

/**
 * The responses of a /v1 route: its 200 schema, the codes its handler answers and those every /v1 route can
 * answer (the auth hook, the server, a JSON body), each status documented; any other status still goes
 * through the error serializer.
 */
export function v1Answers(ok: object, codes: readonly ErrorCode[], options: { readonly jsonBody: boolean; readonly status?: 200 | 204 }) {
  return {
    [options.status ?? 200]: ok,
    ...errorResponses([...v1CommonErrors, ...(options.jsonBody ? bodyErrors : []), ...codes]),
    '4xx': errorSchema,
    '5xx': errorSchema,
  };
}

export const createBodySchema = {
  type: 'object',
  required: ['phoneNumber'],
  properties: {
    countryCode: {
      type: 'string',
      pattern: '^\\+[1-9][0-9]{0,2}$',
      description: 'The country calling code, `+` and 1-3 digits; may be left out when `phoneNumber` is a whole E.164 number.',
    },
    phoneNumber: {
      type: 'string',
      pattern: '^\\+?[0-9]{1,17}$',
      description:
        'The number in local format, digits only (a national trunk prefix such as a leading 0 is allowed), or a whole E.164 number (`+` and digits), whose calling code must then agree with `countryCode` if one is given.',
    },
    type: {
      type: 'string',
      enum: ['SEND_SMS', 'WHATSAPP', 'VOICE_CALL', 'DROPPED_CALL', 'TELEGRAM', 'SILENT'],
      description: 'How the code goes out: `SEND_SMS` (the default) an SMS, `WHATSAPP` a WhatsApp message, `VOICE_CALL` a call that reads the code aloud, `DROPPED_CALL` a dropped call whose caller id ends with the code, `TELEGRAM` a message in Telegram from its Verification Codes account, `SILENT` no code at all: the device proves its number itself (SILENT_PROVIDER; a workflow\'s first step only, its later steps send a code when it fails).',
    },
    fallback: {
      type: 'array',
      maxItems: 2,
      items: { type: 'string', maxLength: 32 },
      description:
        "The workflow's later steps: up to 2 more request types, in order, from `SEND_SMS`, `WHATSAPP`, `VOICE_CALL` and `TELEGRAM` where this service has their channel (never `DROPPED_CALL`, none equal to `type`, none twice). The next step sends the same code through its channel at once when the current step fails with no provider left, or when `FALLBACK_AFTER_SECONDS` (default 60; the client may set its own) pass after its code was sent without a successful verify. The client's default when absent.",
    },
    webhookUrl: {
      type: ['string', 'null'],
      maxLength: 2048,
      description: 'Absolute http(s) URL without credentials that receives the state changes; the client\'s default when absent.',
    },
    reference: { type: ['string', 'null'], maxLength: 256, description: 'The caller\'s own reference, given back in the record and webhooks.' },
    locale: {
      type: ['string', 'null'],
      maxLength: 35,
      description: "BCP 47 language tag (`fr`, `pt-BR`) of the SMS text: the client's template for it (or its language), else the client's default locale, else English; for `VOICE_CALL`, the language the code is read in where the provider has a voice for it.",
    },
    captchaToken: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description:
        "The token of the client's CAPTCHA widget (Turnstile, hCaptcha or reCAPTCHA v3), required when the client has one (403 CAPTCHA_REQUIRED without it); checked server-side, each token once.",
    },
    signals: {
      type: 'object',
      description:
        "The end user as your own backend saw them, for the fraud limits (IP_LIMIT_COUNT, IP_PREFIX_LIMIT_COUNT, DEVICE_LIMIT_COUNT): never shown in an answer or webhook, kept only RETENTION_DAYS.",
      properties: {
        ip: { type: 'string', maxLength: 256, description: "The end user's address, IPv4 or IPv6 text (`::ffff:a.b.c.d` counts as `a.b.c.d`)." },
        deviceId: { type: 'string', maxLength: 256, description: "A stable id of the end user's device or browser, as your app knows it." },
        userAgent: { type: 'string', maxLength: 256 },
        appVersion: { type: 'string', maxLength: 256 },
        platform: { type: 'string', enum: ['ios', 'android', 'web', 'other'] },
      },
    },
  },
  // The first example is what /docs "Try it out" posts: nothing in it points at someone else's server.
  examples: [
    { phoneNumber: '+2348012345678', type: 'SEND_SMS', reference: 'signup-7781' },
    { countryCode: '+234', phoneNumber: '08012345678', type: 'SEND_SMS', webhookUrl: 'https://example.com/hooks/otp', reference: 'signup-7781' },
    { countryCode: '+234', phoneNumber: '8012345678', type: 'DROPPED_CALL' },
    { phoneNumber: '+2348012345678', type: 'VOICE_CALL', locale: 'fr' },
    { countryCode: '+234', phoneNumber: '8012345678', type: 'DROPPED_CALL', fallback: ['SEND_SMS'] },
  ],
} as const;

export const verifyBodySchema = {
  type: 'object',
  required: ['id', 'otp'],
  properties: {
    id: { type: 'string', description: 'The verification id.' },
    otp: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The code the user gave; for a dropped call also the whole caller id as the phone showed it.',
    },
  },
  examples: [{ id: examples.pending.id, otp: examples.pending.otp }],
} as const;

export const idParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The verification id; an unknown or malformed one, or another client\'s, is a 404.' } },
} as const;

/**
 * Documents the header only: it constrains nothing (a header is always a string), so that the handler's own
 * check names the header in its error, as before.
 */
export const idempotencyHeaderSchema = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      // No example: the API reference's "Try it out" would send it with every create, and every later create
      // with another body would be a 409 for 24 h.
      description:
        'Optional, 1 to 255 visible ASCII characters, e.g. a UUID made for this signup. A repeat by the same client within 24 h returns the first response; with a different body it is a 409 `IDEMPOTENCY_KEY_REUSED`.',
    },
  },
} as const;
