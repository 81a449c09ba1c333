import type { Lookup } from '../domain/lookup.js';
import { createBodySchema } from './schemas.js';
import { successEnvelope } from './record-schema.js';

/** A lookup as clients see it (contract 11). */
export interface PublicLookup {
  id: string;
  status: 'COMPLETED';
  phoneNumber: string;
  countryCode: string;
  regionCode: string | null;
  valid: boolean;
  lineType: string;
  carrier: string | null;
  timeZones: string[];
  createdAt: string;
}

export function publicLookup(l: Lookup): PublicLookup {
  return {
    id: l.id,
    // A lookup is answered while the client waits, so every one that exists is complete.
    status: 'COMPLETED',
    phoneNumber: l.phoneNumber,
    countryCode: l.countryCode,
    regionCode: l.regionCode,
    valid: l.valid,
    lineType: l.lineType,
    carrier: l.carrier,
    timeZones: [...l.timeZones],
    createdAt: l.createdAt.toISOString(),
  };
}

const nullableString = { type: ['string', 'null'] } as const;

/** The response schema of a lookup: it serializes exactly these fields. */
export const lookupSchema = {
  type: 'object',
  required: ['id', 'status', 'phoneNumber', 'countryCode', 'regionCode', 'valid', 'lineType', 'carrier', 'timeZones', 'createdAt'],
  properties: {
    id: { type: 'string', description: 'The lookup id (UUID).' },
    status: { type: 'string', enum: ['COMPLETED'], description: 'Always COMPLETED: a lookup ends while the client waits.' },
    phoneNumber: { type: 'string', description: 'The number in E.164 (as read, when it is not valid).' },
    countryCode: { type: 'string', description: 'The country calling code, `+NNN`.' },
    regionCode: { ...nullableString, description: 'ISO 3166 alpha-2 region (NG); null when the number names none.' },
    valid: { type: 'boolean', description: 'Whether the number is valid for its country; an invalid number is a lookup, not an error.' },
    lineType: {
      type: 'string',
      enum: ['MOBILE', 'FIXED_LINE', 'FIXED_LINE_OR_MOBILE', 'VOIP', 'TOLL_FREE', 'PREMIUM_RATE', 'SHARED_COST', 'UAN', 'PAGER', 'VOICEMAIL', 'PERSONAL_NUMBER', 'UNKNOWN'],
      description: "The line type from libphonenumber's metadata.",
    },
    carrier: { ...nullableString, description: 'The carrier the number range was first given to (it may have been ported since), or null.' },
    timeZones: { type: 'array', items: { type: 'string' }, description: 'IANA time zones of the number.' },
    createdAt: { type: 'string', description: 'ISO 8601 with milliseconds, UTC.' },
  },
} as const;

/** An example lookup: a Nigerian mobile. */
export const exampleLookup = {
  id: '5d2a7c1e-3b4f-4e6a-9c8d-7f1e2a3b4c5d',
  status: 'COMPLETED',
  phoneNumber: '+2348031234567',
  countryCode: '+234',
  regionCode: 'NG',
  valid: true,
  lineType: 'MOBILE',
  carrier: 'MTN',
  timeZones: ['Africa/Lagos'],
  createdAt: '2026-11-21T09:30:00.123Z',
} as const;

/** The 200 envelope of a lookup route, with its example. */
export function lookupEnvelope(message: string) {
  return successEnvelope(message, lookupSchema, exampleLookup);
}

/** The lookup body: `countryCode` and `phoneNumber` checked exactly as a create's are. */
export const lookupBodySchema = {
  type: 'object',
  required: ['phoneNumber'],
  properties: {
    countryCode: createBodySchema.properties.countryCode,
    phoneNumber: createBodySchema.properties.phoneNumber,
  },
} as const;
