import { prefixOf } from './prefix-velocity.js';

/**
 * A person's data (contract 20): what erasing takes away. A verification's number is reduced to its prefix (the
 * counts that protect the service still count it), its code, reference, text and signals go, with the messages,
 * webhook events and send of it; lookups of the number go; a block or allow list entry keeps only its number.
 */

/** Which verifications to erase. */
export type ErasureSelection =
  /** One verification of a client (DELETE /v1/otp/{id}). */
  | { readonly kind: 'verification'; readonly clientId: string; readonly id: string }
  /** Every trace of a number (E.164), of one client or of all (`otp-service erase`). */
  | { readonly kind: 'number'; readonly phoneNumber: string; readonly clientId: string | null }
  /** Verifications made before a time, at most `limit` of them (VERIFICATION_RETENTION_DAYS). */
  | { readonly kind: 'older'; readonly before: Date; readonly limit: number };

/** What an erasure removed, by kind. */
export interface Erased {
  readonly verifications: number;
  readonly messages: number;
  readonly webhookEvents: number;
  readonly lookups: number;
  readonly listEntries: number;
}

export interface PersonalDataStore {
  /** Erases what `selection` names, in one transaction; a verification erased before counts no more. */
  erase(selection: ErasureSelection): Promise<Erased>;
}

/** A number as an erased verification keeps it: its prefix, the last 3 digits masked (+2348031234XXX). */
export function reducedNumber(e164: string): string {
  return `${prefixOf(e164)}XXX`;
}
