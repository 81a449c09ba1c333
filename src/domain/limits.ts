/** Limits on how often one client may start verifications of one number (contract 6). */
export interface PhoneLimitPolicy {
  readonly count: number;
  readonly windowSeconds: number;
  readonly cooldownSeconds: number;
}

/** What the store knows of a number's recent verifications by one client. */
export interface PhoneHistory {
  /** Verifications created inside the window. */
  readonly countInWindow: number;
  /** The oldest of them, when there is one. */
  readonly oldestInWindow: Date | null;
  /** The newest verification at all, when there is one inside the look-back. */
  readonly latest: Date | null;
}

export type LimitDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

/** How far back the store must look for `decidePhoneLimit` to be right. */
export function phoneLookBackSeconds(policy: PhoneLimitPolicy): number {
  return Math.max(policy.windowSeconds, policy.cooldownSeconds);
}

export function decidePhoneLimit(history: PhoneHistory, now: Date, policy: PhoneLimitPolicy): LimitDecision {
  const t = now.getTime();
  let waitMs = 0;
  if (history.latest) {
    waitMs = Math.max(waitMs, history.latest.getTime() + policy.cooldownSeconds * 1000 - t);
  }
  if (history.countInWindow >= policy.count && history.oldestInWindow) {
    waitMs = Math.max(waitMs, history.oldestInWindow.getTime() + policy.windowSeconds * 1000 - t);
  }
  return waitMs > 0 ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) } : { allowed: true };
}
