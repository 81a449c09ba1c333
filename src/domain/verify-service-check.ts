import { dispatched, type AfterCommit } from './after-commit.js';
import { eventsFor } from './outbox-events.js';
import type { Clock, Random } from './ports.js';
import { serviceSendOf, type ServiceCodeChecks } from './service-code.js';
import { asOf, decideVerify, type Verification, type VerifyDecision } from './verification.js';
import type { VerificationStore } from './verification-store.js';

/**
 * A verify decided by a service's answer, as decideVerify decides one by our code: an attempt more on the
 * counter either way, SUCCESS when right, FAILED MAX_ATTEMPTS on the last wrong one.
 */
export function decideServiceVerify(v: Verification, right: boolean, now: Date, maxAttempts: number): VerifyDecision {
  const current = asOf(v, now);
  if (current.status !== 'PENDING') return { kind: 'not-pending', current };
  const counter = v.counter + 1;
  if (right) return { kind: 'success', next: { ...v, counter, status: 'SUCCESS', updatedAt: now } };
  if (counter >= maxAttempts) return { kind: 'mismatch', next: { ...v, counter, status: 'FAILED', failureReason: 'MAX_ATTEMPTS', updatedAt: now } };
  return { kind: 'mismatch', next: { ...v, counter, updatedAt: now } };
}

export interface ServiceVerifyDeps {
  readonly store: VerificationStore;
  readonly afterCommit: AfterCommit;
  readonly clock: Clock;
  readonly random: Random;
  readonly maxAttempts: number;
  readonly checks: ServiceCodeChecks;
}

/** What a verify asked of a verify service came to; `unavailable`: the service did not answer, nothing counted. */
export type ServiceVerifyOutcome =
  | { readonly kind: 'success' | 'mismatch' | 'not-pending'; readonly verification: Verification }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'unavailable'; readonly reason: string; readonly retryAfterSeconds: number };

/** How soon to ask again after a verify service did not answer, or while a resend's send is on its way. */
export const serviceRetrySeconds = 5;

/**
 * Verify (contract 3.3) of a code a verify service holds: the service is asked first, outside any transaction
 * (bounded by PROVIDER_TIMEOUT_MS, holding no row), then its answer is decided and written optimistically with
 * its events as a verify is. Null: the code the user holds is ours (or the verification is no longer pending),
 * so the ordinary verify decides.
 */
export async function verifyByService(deps: ServiceVerifyDeps, clientId: string, id: string, code: string): Promise<ServiceVerifyOutcome | null> {
  const known = await deps.store.find(clientId, id);
  if (!known || known.relayed) return { kind: 'not-found' };
  const send = serviceSendOf(known);
  if (send === null || asOf(known, deps.clock.now()).status !== 'PENDING') return null;
  const answer = await deps.checks.check(send, code);
  if (answer.kind === 'unavailable') return { kind: 'unavailable', reason: answer.reason, retryAfterSeconds: serviceRetrySeconds };
  const committed = await deps.store.optimistic(async (tx): Promise<ServiceVerifyOutcome> => {
    const current = await tx.find(clientId, id);
    if (!current) return { kind: 'not-found' };
    const now = deps.clock.now();
    const still = serviceSendOf(current);
    // Our own code went out meanwhile (a failover, a workflow step): it is the one to compare.
    const decision =
      still !== null && still.provider === send.provider ? decideServiceVerify(current, answer.kind === 'right', now, deps.maxAttempts) : decideVerify(current, code, now, deps.maxAttempts);
    const events = (v: Verification) => eventsFor(v, now, deps.random, deps.afterCommit);
    if (decision.kind === 'not-pending') {
      if (current.status === 'PENDING') tx.save(current, decision.current, events(decision.current));
      return { kind: 'not-pending', verification: decision.current };
    }
    tx.save(current, decision.next, events(decision.next));
    return { kind: decision.kind, verification: decision.next };
  }, deps.maxAttempts + 2);
  return dispatched(deps.afterCommit, committed);
}
