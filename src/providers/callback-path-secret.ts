import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A per-deployment secret carried as the last segment of a callback URL's path, for providers whose delivery
 * reports are not signed (Infobip, Africa's Talking): the provider is given `{callbackUrl}/{secret}` and a
 * callback is believed only when the URL it called ends with that segment. Anyone who can read that URL (the
 * provider's dashboard, a proxy's access log) can forge receipts, so the path after `/callbacks/<name>/` must be
 * kept out of access logs like any other credential.
 */

/** The fewest characters a path secret may have: 32 URL-safe characters, at least 160 bits when random. */
export const minPathSecretLength = 32;

/** Parses a path secret setting; the error never repeats the value. */
export function parsePathSecret(raw: string): string {
  if (raw.length < minPathSecretLength) {
    throw new Error(`must be at least ${minPathSecretLength} characters, e.g. the output of: openssl rand -hex 32`);
  }
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) {
    throw new Error('must be letters, digits, "-" and "_" only: it is a segment of a URL path');
  }
  return raw;
}

/** The URL to hand the provider: the service's callback URL with the secret as one more path segment. */
export function callbackUrlWithSecret(callbackUrl: string, secret: string): string {
  return `${callbackUrl.replace(/\/+$/, '')}/${secret}`;
}

/**
 * True when the last segment of the called URL's path is the secret. Both sides are hashed before the
 * comparison, so that neither the content nor the length of the secret shows in the time it takes.
 */
export function hasPathSecret(calledUrl: string, secret: string): boolean {
  let pathname: string;
  try {
    pathname = new URL(calledUrl).pathname;
  } catch {
    return false;
  }
  const last = pathname.slice(pathname.lastIndexOf('/') + 1);
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(last), digest(secret));
}
