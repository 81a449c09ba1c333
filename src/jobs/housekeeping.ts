import type { Clock } from '../domain/ports.js';
import { idempotencySeconds } from '../domain/verification-service.js';
import { captchaTokenSeconds } from '../domain/captcha.js';
import { relayRequestMemoryMs } from '../domain/relay-requests.js';

export interface HousekeepingDeps {
  readonly counters: { prune(before: Date): Promise<void> };
  readonly idempotencyKeys: { pruneIdempotencyKeys(before: Date): Promise<void> };
  /** CAPTCHA tokens accepted (contract 14): remembered 10 minutes. */
  readonly captchaTokens?: { prune(before: Date): Promise<void> };
  /** Signed relay requests seen (contract 20): remembered while their signatures could be accepted. */
  readonly relayRequests?: { prune(before: Date): Promise<void> };
  /** Deletes at most `batch` rows of each kind of history older than `before`; how many went. */
  readonly history: (before: Date, batch: number) => Promise<number>;
  readonly clock: Clock;
  /** RETENTION_DAYS; 0 keeps history for good. */
  readonly retentionDays: number;
  /** Erases at most `limit` verifications made before `before` (a person's data, contract 20); how many went. */
  readonly eraseVerifications?: (before: Date, limit: number) => Promise<number>;
  /** VERIFICATION_RETENTION_DAYS; 0 keeps verifications' numbers and codes for good. */
  readonly verificationRetentionDays?: number;
  /** Budgets' holds (contract 17): gives back those of verifications that ended without their send, made before `before`. */
  readonly budgetHolds?: { releaseEnded(before: Date, limit: number): Promise<number>; refreshKept(): Promise<void> };
}

/**
 * A hold is given back by the sweep only once this old: it is written before its create's transaction commits
 * the verification, which a database answers within DATABASE_TIMEOUT_MS.
 */
const holdGraceMs = 60_000;

/** Rows of history pruned per kind in one round. */
const pruneBatch = 5_000;
/** Verifications erased in one round: each takes its messages and events with it in one transaction. */
const eraseBatch = 500;

/**
 * One round of pruning: old counters, expired Idempotency-Keys, verifications' personal data past
 * VERIFICATION_RETENTION_DAYS, history past RETENTION_DAYS. True when more is due.
 */
export async function housekeeping(deps: HousekeepingDeps): Promise<boolean> {
  const now = deps.clock.now().getTime();
  await deps.counters.prune(new Date(now - 10 * 60_000));
  await deps.idempotencyKeys.pruneIdempotencyKeys(new Date(now - idempotencySeconds * 1000));
  await deps.captchaTokens?.prune(new Date(now - captchaTokenSeconds * 1000));
  await deps.relayRequests?.prune(new Date(now - relayRequestMemoryMs));
  const released = (await deps.budgetHolds?.releaseEnded(new Date(now - holdGraceMs), pruneBatch)) ?? 0;
  // In case a client change's announcement was lost.
  await deps.budgetHolds?.refreshKept();
  const days = deps.verificationRetentionDays ?? 0;
  const erased = days > 0 && deps.eraseVerifications ? await deps.eraseVerifications(new Date(now - days * 86_400_000), eraseBatch) : 0;
  if (deps.retentionDays === 0) return erased >= eraseBatch || released >= pruneBatch;
  // A full round means more is due: run again at once rather than in a minute.
  const pruned = await deps.history(new Date(now - deps.retentionDays * 86_400_000), pruneBatch);
  return pruned >= pruneBatch || erased >= eraseBatch || released >= pruneBatch;
}
