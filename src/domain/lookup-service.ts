import type { Lookup } from './lookup.js';
import type { LookupStore } from './lookup-store.js';
import type { NumberFacts, NumberMetadata } from './number-metadata.js';
import { parsePhone, readRefusedPhone, type RefusedPhone } from './phone.js';
import type { Clock, Random } from './ports.js';

export interface LookupRequest {
  readonly clientId: string;
  /** +NNN, as the create body has it. */
  readonly countryCode: string;
  /** Local format, digits, as the create body has it. */
  readonly phoneNumber: string;
}

export interface LookupServiceDeps {
  readonly store: LookupStore;
  readonly metadata: NumberMetadata;
  readonly clock: Clock;
  readonly random: Random;
}

/** Number lookups (contract 11): read the metadata, keep the answer for the client, give it back by id. */
export class LookupService {
  constructor(private readonly deps: LookupServiceDeps) {}

  /**
   * Looks a number up and records the answer. A number that is not valid for its country code is an answer
   * too (valid false), not a refusal: a client asks precisely to find that out.
   */
  async request(request: LookupRequest): Promise<Lookup> {
    const { store, metadata, clock, random } = this.deps;
    // parsePhone is the one judge of validity, as it is for verifications.
    const phone = parsePhone(request.countryCode, request.phoneNumber);
    const { e164, facts } = phone
      ? { e164: phone.e164, facts: await metadata.describe(phone.e164) }
      : notValid(readRefusedPhone(request.countryCode, request.phoneNumber));
    const lookup: Lookup = {
      id: random.uuid(),
      clientId: request.clientId,
      createdAt: clock.now(),
      phoneNumber: e164,
      countryCode: request.countryCode,
      ...facts,
    };
    await store.insert(lookup);
    return lookup;
  }

  /** A client's lookup; another client's is null. */
  fetch(clientId: string, id: string): Promise<Lookup | null> {
    return this.deps.store.find(clientId, id);
  }
}

/** What a lookup says of a number that is not valid: no line type, no carrier, no time zones. */
function notValid(refused: RefusedPhone): { e164: string; facts: NumberFacts } {
  return {
    e164: refused.e164,
    facts: { valid: false, regionCode: refused.regionCode, lineType: 'UNKNOWN', carrier: null, timeZones: [] },
  };
}
