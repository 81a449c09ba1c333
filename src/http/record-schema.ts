/** The verification record and the success envelope, as response schemas (they decide what may leave). */
import { riskFactors, riskRules, ruleModes } from '../domain/risk.js';

const nullableString = { type: ['string', 'null'] } as const;
const timestamp = 'ISO 8601 UTC with milliseconds.';

export const recordSchema = {
  type: 'object',
  description: 'A verification: the number, its code, its state and how it was sent.',
  required: [
    'id', 'createdAt', 'updatedAt', 'expiresAt', 'otp', 'phoneNumber', 'country', 'countryCode', 'counter',
    'pairedNumber', 'type', 'status', 'webhookUrl', 'reference', 'failureReason', 'delivery', 'fallback',
    'deliveries', 'cost', 'risk',
  ],
  properties: {
    id: { type: 'string', description: 'The verification id (a UUID).' },
    createdAt: { type: 'string', description: timestamp },
    updatedAt: { type: 'string', description: timestamp },
    expiresAt: { type: 'string', description: `When the code stops working (OTP_TTL_SECONDS after creation). ${timestamp}` },
    otp: {
      type: ['string', 'null'],
      description:
        'The code: random digits (OTP_LENGTH, default 6) for SMS, WHATSAPP and VOICE_CALL; for DROPPED_CALL the last 4 digits of the caller id; null when the client withholds codes (`clients update --reveal-code false`).',
    },
    phoneNumber: { type: 'string', description: 'The number verified, in E.164.' },
    country: { type: 'string', description: 'The country calling code, `+NNN` (the same as countryCode).' },
    countryCode: { type: 'string', description: 'The country calling code, `+NNN`.' },
    counter: { type: 'integer', description: 'Verify attempts so far.' },
    pairedNumber: {
      type: 'string',
      description:
        'The number the user is contacted from: the SMS sender (for WHATSAPP the WhatsApp business number), for DROPPED_CALL the caller id whose last digits are the code, for VOICE_CALL the number the call comes from (VOICE_CALLER_NUMBER). In the local format of its country when the user\'s number has the same country calling code, else in E.164 (`+2349010001234`): a national format means nothing to a phone in another country.',
    },
    type: {
      type: 'string',
      enum: ['SMS', 'DROPPED_CALL', 'WHATSAPP', 'VOICE_CALL', 'TELEGRAM', 'SILENT'],
      description: '`SMS` for a `SEND_SMS` request, otherwise the request\'s own word (`DROPPED_CALL`, `WHATSAPP`, `VOICE_CALL`, `TELEGRAM`, `SILENT`).',
    },
    status: {
      type: 'string',
      enum: ['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED'],
      description: 'A verification whose time is up reads `EXPIRED` at once.',
    },
    webhookUrl: { ...nullableString, description: 'Where state changes are posted; null when none was given and the client has no default.' },
    reference: { ...nullableString, description: 'The caller\'s own reference; null when none was given.' },
    failureReason: {
      type: ['string', 'null'],
      enum: ['MAX_ATTEMPTS', 'UNDELIVERABLE', 'CANCELED', null],
      description: 'Null unless `FAILED`.',
    },
    delivery: {
      type: 'object',
      description: 'The latest send of the code.',
      required: ['channel', 'provider', 'status', 'sends', 'updatedAt', 'attempts', 'lastError'],
      properties: {
        channel: {
          type: 'string',
          enum: ['SMS', 'CALL', 'WHATSAPP', 'VOICE', 'TELEGRAM', 'SILENT'],
          description: '`CALL` for a dropped call, `VOICE` for a call that reads the code; a dropped call that fell back to SMS reads `SMS`.',
        },
        provider: { ...nullableString, description: 'The provider that took it; null before the first attempt.' },
        status: {
          type: 'string',
          enum: ['QUEUED', 'SENT', 'DELIVERED', 'UNDELIVERED', 'FAILED'],
          description: '`SENT`: the provider accepted it; `DELIVERED`: a receipt said so (a call: the phone rang).',
        },
        sends: { type: 'integer', description: 'How many times the code was sent, resends included.' },
        updatedAt: { type: 'string', description: timestamp },
        attempts: {
          type: 'integer',
          description: "Provider calls made for the latest send, retries of a failed call included; 0 before the first.",
        },
        lastError: sendErrorSchema('The latest failure of the latest send (while a retry is pending too); null when none failed.'),
      },
    },
    fallback: {
      type: 'array',
      items: { type: 'string' },
      description: "The workflow's request types still to come, in order; `[]` when none is left or none was asked.",
    },
    deliveries: {
      type: 'array',
      description:
        "Every provider's turn at sending the code, oldest first: a failover between two providers makes two, the retries of one provider's failed call stay in its turn; the latest is `delivery` as it stands.",
      items: {
        type: 'object',
        required: ['channel', 'provider', 'status', 'at', 'attempts', 'lastError', 'cost'],
        properties: {
          channel: { type: 'string', description: 'The channel of the attempt, as `delivery.channel`.' },
          provider: { type: 'string', description: 'The provider tried (`test` for a test number).' },
          status: {
            type: 'string',
            enum: ['QUEUED', 'SENT', 'DELIVERED', 'UNDELIVERED', 'FAILED'],
            description: '`QUEUED` while a failed call waits for its retry; `SENT`/`DELIVERED` once taken, then as its receipts say; `FAILED` when refused or given up.',
          },
          at: { type: 'string', description: `When its latest call was made. ${timestamp}` },
          attempts: { type: 'integer', description: 'Calls made to the provider in this turn.' },
          lastError: sendErrorSchema('The latest failure of this turn; null when none failed.'),
          cost: {
            ...nullableString,
            description:
              "What this send cost, a decimal string in `cost.currency` (`0.0125`): the price the provider reported for it, else the operator's imported price for its provider and destination; null when neither is known, or when no provider took it.",
          },
        },
      },
    },
    cost: {
      type: 'object',
      description: "What the verification's sends cost so far. A test number's cost nothing.",
      required: ['amount', 'currency', 'unknownSends'],
      properties: {
        amount: { type: 'string', description: 'The sum of the known costs of `deliveries`, a decimal string (`0.0204`).' },
        currency: { type: 'string', description: 'ISO 4217: the currency the service counts in (`USD`).' },
        unknownSends: { type: 'integer', description: 'Sends a provider took whose cost is not known, and so not in `amount`.' },
      },
    },
    checkUrl: {
      type: 'string',
      description:
        'A `SILENT` verification with `SILENT_PROVIDER=camara` only: the address the device opens over its mobile data, so that its operator confirms its number (CAMARA Number Verification). Absent otherwise.',
    },
    risk: {
      type: 'object',
      description: 'How the fraud and cost rules judged the create.',
      required: ['verdict', 'factors'],
      properties: {
        verdict: {
          type: 'string',
          enum: ['allow', 'challenge', 'block', 'shadow_block'],
          description:
            '`allow`: no rule objected; `challenge`: a CAPTCHA was asked and passed; `shadow_block`: a rule in shadow mode would have refused it (the code was sent).',
        },
        factors: {
          type: 'array',
          description: 'One entry per rule that objected: its risk factor, its name and its mode.',
          items: {
            type: 'object',
            required: ['factor', 'rule', 'mode'],
            properties: {
              factor: { type: 'string', enum: riskFactors },
              rule: { type: 'string', enum: Object.keys(riskRules) },
              mode: { type: 'string', enum: ruleModes },
            },
          },
        },
      },
    },
  },
} as const;

/** A failed provider call, in the service's words: never a provider credential. */
function sendErrorSchema(description: string) {
  return {
    type: ['object', 'null'],
    description,
    required: ['code', 'message', 'at'],
    properties: {
      code: {
        type: 'string',
        enum: ['PROVIDER_UNAVAILABLE', 'PROVIDER_REFUSED', 'UNDELIVERED'],
        description:
          '`PROVIDER_UNAVAILABLE`: no answer, a time-out, throttling or a server error (retried, then the next provider); `PROVIDER_REFUSED`: the provider refused the message (the next provider at once); `UNDELIVERED`: taken, and its receipt said it never arrived.',
      },
      message: { type: 'string', description: 'What went wrong, for an operator: the network error, or what the provider answered.' },
      at: { type: 'string', description: timestamp },
    },
  } as const;
}

/**
 * The record as a shared schema (app.addSchema), so that the many responses that carry it refer to it: the
 * reference then holds it once, as the component `VerificationRecord`.
 */
export const sharedRecordSchema = { $id: 'VerificationRecord', title: 'VerificationRecord', ...recordSchema } as const;
export const recordRef = { $ref: 'VerificationRecord#' } as const;

/** The success envelope (seed 2.3) around `data`, with an example answer. */
export function successEnvelope<D extends object>(message: string, data: D, example: unknown) {
  return {
    type: 'object',
    description: message,
    required: ['status', 'message', 'data'],
    properties: {
      status: { type: 'boolean', enum: [true] },
      message: { type: 'string', examples: [message] },
      data,
    },
    'x-examples': { [message]: { value: { status: true, message, data: example } } },
  } as const;
}

/** The success envelope around a record. */
export function envelopeOf(message: string, example: object) {
  return successEnvelope(message, recordRef, example);
}

export const envelopeSchema = {
  type: 'object',
  properties: { status: { type: 'boolean' }, message: { type: 'string' }, data: recordSchema },
} as const;

