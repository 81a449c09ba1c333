import type { Verification } from '../domain/verification.js';
import { publicRecord, type PublicRecord } from './envelope.js';

/**
 * The examples of the API reference (/openapi.json, /docs), with the values of the contract's own examples.
 * Records go through publicRecord and errors through errorBody, so each example is what the service sends.
 */

const created = new Date('2026-11-21T09:30:00.123Z');
const sent = new Date('2026-11-21T09:30:00.456Z');

/** A verification just created for a Nigerian number, code sent by SMS. */
export const exampleVerification: Verification = {
  id: '3f1c2b7e-8a4d-4e0f-9b6a-2d5c7e9f1a3b',
  clientId: '00000000-0000-4000-8000-000000000000',
  createdAt: created,
  updatedAt: sent,
  expiresAt: new Date('2026-11-21T09:40:00.123Z'),
  otp: '482913',
  phoneNumber: '+2348012345678',
  countryCode: '+234',
  counter: 0,
  pairedNumber: '08031234567',
  pairedE164: '+2348031234567',
  type: 'SMS',
  status: 'PENDING',
  webhookUrl: 'https://example.com/hooks/otp',
  reference: 'signup-7781',
  failureReason: null,
  sendRequests: 1,
  locale: null,
  codeWithheld: false,
  testNumber: false,
  regionCode: 'NG',
  lastSendAt: created,
  delivery: { channel: 'SMS', provider: 'twilio', messageId: null, status: 'SENT', sends: 1, updatedAt: sent },
  deliveries: [{ channel: 'SMS', provider: 'twilio', status: 'SENT', at: sent, attempts: 1, lastError: null, cost: '0.0079' }],
  workflow: [],
  fallbackAfterSeconds: 60,
  nextStepAt: null,
  failoverAt: null,
  steps: 0,
};

const verifiedAt = new Date('2026-11-21T09:31:12.004Z');

/** The examples' COST_CURRENCY. */
const exampleCurrency = 'USD';
const record = (v: Verification) => publicRecord(v, exampleCurrency);

export const examples = {
  pending: record(exampleVerification),
  success: record({
    ...exampleVerification,
    status: 'SUCCESS',
    counter: 1,
    updatedAt: verifiedAt,
    delivery: { ...exampleVerification.delivery, status: 'DELIVERED', updatedAt: verifiedAt },
  }),
  droppedCall: record({
    ...exampleVerification,
    id: '9b2e4c1a-5d7f-4a3e-8c6b-1f0e2d4a6c8e',
    type: 'DROPPED_CALL',
    otp: '5521',
    pairedNumber: '017005521',
    webhookUrl: null,
    reference: null,
    delivery: { ...exampleVerification.delivery, channel: 'CALL', status: 'QUEUED', provider: null, sends: 0 },
    deliveries: [],
    workflow: [],
    fallbackAfterSeconds: 60,
    nextStepAt: null,
    failoverAt: null,
    steps: 0,
  }),
  canceled: record({
    ...exampleVerification,
    status: 'FAILED',
    failureReason: 'CANCELED',
    updatedAt: verifiedAt,
  }),
  /** A wrong code on an attempt that was not the last. */
  mismatch: record({ ...exampleVerification, counter: 1 }),
  /** A verification that was verified already. */
  notPending: record({ ...exampleVerification, status: 'SUCCESS', counter: 1 }),
} as const satisfies Record<string, PublicRecord>;
