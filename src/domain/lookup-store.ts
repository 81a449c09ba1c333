import type { Lookup } from './lookup.js';

/** Storage of lookups (port). */
export interface LookupStore {
  insert(lookup: Lookup): Promise<void>;
  /** A client's lookup; another client's, an unknown or a malformed id reads as null. */
  find(clientId: string, id: string): Promise<Lookup | null>;
}
