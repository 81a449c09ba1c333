/** How long a console session lives: it ends after `idleMs` without a request, and `absoluteMs` after sign-in. */
export interface SessionPolicy {
  readonly idleMs: number;
  readonly absoluteMs: number;
}

/** 30 minutes idle, 12 hours in all (OWASP's session management guidance for a privileged application). */
export const consoleSessionPolicy: SessionPolicy = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000 };

export interface SessionTimes {
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
}

/** Whether a session may still be used at `now`. */
export function sessionAlive(session: SessionTimes, now: Date, policy: SessionPolicy): boolean {
  const t = now.getTime();
  return t - session.lastSeenAt.getTime() < policy.idleMs && t - session.createdAt.getTime() < policy.absoluteMs;
}
