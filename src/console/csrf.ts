import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Cross-site request protection for every console change, two checks that each stop a forged request:
 * - the session's CSRF token in the `X-CSRF-Token` header. It is derived from the session id (which only the
 *   HttpOnly cookie holds), so nothing more is stored, and a page on another site can neither read the cookie nor
 *   the console's answers that carry the token;
 * - the `Origin` header must be the console's own origin (a browser always sends it on a cross-site POST).
 * The SameSite=Strict cookie is a third: the browser does not send it on a request another site starts.
 */
export function csrfTokenOf(sessionId: string): string {
  // A label keeps it apart from the session's stored hash (sha256 of the bare id).
  return createHash('sha256').update(`console-csrf\u0000${sessionId}`).digest('base64url');
}

/** Whether the presented token is the session's, compared in constant time. */
export function csrfTokenMatches(sessionId: string, presented: string | undefined): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfTokenOf(sessionId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether a request's Origin header names the console's origin (scheme, host and port, exactly). */
export function originAllowed(origin: string | undefined, expected: string): boolean {
  return typeof origin === 'string' && origin === expected;
}
