import { createHmac, timingSafeEqual } from 'node:crypto';
import { relayFutureToleranceSeconds } from '../../domain/relay-requests.js';

/** How old a ZITADEL-Signature timestamp may be: ZITADEL's own DefaultTolerance, 300 s (ahead: 30 s at most). */
export const zitadelTolerance = 300;

export type ZitadelSignatureCheck = 'valid' | 'missing' | 'malformed' | 'stale' | 'mismatch';

/**
 * Checks a `ZITADEL-Signature` header as ZITADEL's own validator does (zitadel/zitadel `pkg/actions/signing.go`,
 * ValidatePayload): the header is `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`; each v1 is HMAC-SHA256, keyed with the
 * signing key's text, of `<t>.<raw body>`; any one matching is enough. Pairs are split on `=` and anything but
 * two parts makes the header invalid; a v1 that is not hex is skipped, other names ignored, as there.
 * Stricter than there in one way: a timestamp more than 30 s ahead of now is refused too (ZITADEL only refuses
 * old ones), so a signed request cannot be kept for later use by dating it ahead.
 */
export function checkZitadelSignature(header: string | undefined, rawBody: string, signingKey: string, now: Date): ZitadelSignatureCheck {
  if (header === undefined || header === '') return 'missing';
  let timestamp: string | null = null;
  const signatures: Buffer[] = [];
  for (const pair of header.split(',')) {
    const parts = pair.split('=');
    if (parts.length !== 2) return 'malformed';
    const [name, value] = parts as [string, string];
    if (name === 't') {
      if (!/^-?\d{1,15}$/.test(value)) return 'malformed';
      timestamp = value;
    } else if (name === 'v1' && /^(?:[0-9a-fA-F]{2})+$/.test(value)) {
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  // Go's zero time when t is absent: always far too old.
  if (timestamp === null) return signatures.length === 0 ? 'mismatch' : 'stale';
  if (signatures.length === 0) return 'mismatch';
  const age = now.getTime() / 1000 - Number(timestamp);
  if (age > zitadelTolerance || -age > relayFutureToleranceSeconds) return 'stale';
  // strconv.FormatInt(t.Unix(), 10): the timestamp as ZITADEL wrote it, without leading zeros or a plus.
  const expected = createHmac('sha256', signingKey).update(`${Number(timestamp)}.`).update(rawBody).digest();
  return signatures.some((s) => s.length === expected.length && timingSafeEqual(s, expected)) ? 'valid' : 'mismatch';
}
