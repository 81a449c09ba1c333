import type { Lookup } from '../domain/lookup.js';
import { createBodySchema, v1Responses } from './schemas.js';

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
  properties: {
    id: { type: 'string' },
    status: { type: 'string' },
    phoneNumber: { type: 'string' },
    countryCode: { type: 'string' },
    regionCode: nullableString,
    valid: { type: 'boolean' },
    lineType: { type: 'string' },
    carrier: nullableString,
    timeZones: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string' },
  },
} as const;

/** Every status a lookup route answers with; errors have the one /v1 shape (and never a `data`). */
export const lookupResponses = {
  200: {
    type: 'object',
    properties: { status: { type: 'boolean' }, message: { type: 'string' }, data: lookupSchema },
  },
  '4xx': v1Responses['4xx'],
  '5xx': v1Responses['5xx'],
} as const;

/** The lookup body: `countryCode` and `phoneNumber` checked exactly as a create's are. */
export const lookupBodySchema = {
  type: 'object',
  required: ['countryCode', 'phoneNumber'],
  properties: {
    countryCode: createBodySchema.properties.countryCode,
    phoneNumber: createBodySchema.properties.phoneNumber,
  },
} as const;
