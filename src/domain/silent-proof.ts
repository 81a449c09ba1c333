import { asOf, type Verification } from './verification.js';

/**
 * Silent verification (contract 19, SILENT), pure: what a device's proof of its number comes to. The proof is
 * checked by the configured provider (a Firebase PNV token against Google's keys; CAMARA's answer) before the
 * transaction; this decides what it does to the verification, as decideVerify does for a code.
 */

/** What checking a device's proof came to. */
export type ProofCheck =
  /** The proof is good and names the verification's number. */
  | { readonly kind: 'proved' }
  /** It proves nothing of this number (bad signature, expired, another issuer, audience or number, malformed). */
  | { readonly kind: 'not-proved'; readonly reason: string }
  /** It could not be checked (the key set did not come in time): nothing is decided, no attempt counted. */
  | { readonly kind: 'unavailable'; readonly reason: string };

/** Checks a token a device got for its number (port; the provider lives in src/providers/silent/). */
export interface NumberProofChecker {
  /** Whether `token` proves `phoneNumber` (E.164). Never throws for a bad token: that is `not-proved`. */
  check(token: string, phoneNumber: string): Promise<ProofCheck>;
}

/** What the operator said of a device's number (CAMARA Number Verification). */
export type NetworkAnswer =
  | { readonly kind: 'verified' }
  | { readonly kind: 'not-verified' }
  /** The operator could not be asked, or refused (a token not granted, an error answer, no answer in time). */
  | { readonly kind: 'failed'; readonly reason: string };

/** The network's proof of a device's number (port; CAMARA Number Verification in src/providers/silent/). */
export interface NetworkProof {
  /** Where the device is sent to begin: the operator's authorization request, with a state bound to the verification. */
  begin(verificationId: string): string;
  /** The verification a callback's state names; null when the state is not one of ours. */
  opened(state: string): string | null;
  /** Trades the callback's code for the device's token and asks whether its number is `phoneNumber`. */
  check(state: string, code: string, phoneNumber: string): Promise<NetworkAnswer>;
}

export type SilentProofDecision =
  | { readonly kind: 'success'; readonly next: Verification }
  | { readonly kind: 'mismatch'; readonly next: Verification }
  | { readonly kind: 'not-pending'; readonly current: Verification }
  /** Not a SILENT verification: there is no proof to give. */
  | { readonly kind: 'not-silent' };

/**
 * A device's proof posted for a verification: counted as a verify attempt is (contract 3.3): proved is SUCCESS,
 * anything else a wrong attempt, FAILED MAX_ATTEMPTS on the last one.
 */
export function decideSilentProof(v: Verification, proved: boolean, now: Date, maxAttempts: number): SilentProofDecision {
  if (v.type !== 'SILENT') return { kind: 'not-silent' };
  const current = asOf(v, now);
  if (current.status !== 'PENDING') return { kind: 'not-pending', current };
  const counter = v.counter + 1;
  if (proved) return { kind: 'success', next: { ...v, counter, status: 'SUCCESS', nextStepAt: null, updatedAt: now } };
  if (counter >= maxAttempts) return { kind: 'mismatch', next: { ...v, counter, status: 'FAILED', failureReason: 'MAX_ATTEMPTS', nextStepAt: null, updatedAt: now } };
  return { kind: 'mismatch', next: { ...v, counter, updatedAt: now } };
}
