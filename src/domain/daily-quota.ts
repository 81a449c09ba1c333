/** A client's daily send quota (contract 6, CLIENT_DAILY_SEND_LIMIT): days are UTC days. */

/** The UTC day of an instant, as YYYY-MM-DD (the key the quota counts under). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export type DailyQuotaDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * Whether one more send fits in today's quota, given what the client sent today; when it does not, the wait is
 * until the next UTC midnight, when a new day's count starts. `limit` 0 means no quota.
 */
export function decideDailyQuota(sentToday: number, limit: number, now: Date): DailyQuotaDecision {
  if (limit === 0 || sentToday < limit) return { allowed: true };
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((midnight - now.getTime()) / 1000)) };
}
