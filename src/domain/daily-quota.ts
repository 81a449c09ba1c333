/** A client's daily send quota (contract 6, CLIENT_DAILY_SEND_LIMIT, on by default): days are UTC days. */

/** The UTC day of an instant, as YYYY-MM-DD (the key the quota counts under). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The wait of a send refused for the day's quota: until the next UTC midnight, when a new day's count starts. */
export function untilNextUtcDay(now: Date): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

/** A day in milliseconds: the quota's window, which starts at UTC midnight. */
export const dayMs = 24 * 60 * 60 * 1000;

/**
 * The day's quota, admitted by one client's send at a time across every instance (port; a QuotaLimiter over the
 * shares in client_daily_sends implements it).
 */
export interface DailySends {
  /** True when one more send of the client fits in today's quota (and it is counted). */
  tryAcquire(clientId: string): Promise<boolean>;
  /** Gives back a send `tryAcquire` admitted that was not made (the create or resend was refused after all). */
  release(clientId: string): void;
}
