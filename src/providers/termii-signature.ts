import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Termii's `X-Termii-Signature`: an HMAC-SHA512 of the event's raw body keyed by the account's secret key
 * (https://developer.termii.com/events-and-reports, "Verifying events"), in hex.
 */
export function termiiSignature(secretKey: string, rawBody: Buffer): string {
  return createHmac('sha512', secretKey).update(rawBody).digest('hex');
}

/** True when `signature` (hex, either case) is Termii's for this body; compared in constant time. */
export function isTermiiSignatureValid(secretKey: string, signature: string, rawBody: Buffer): boolean {
  const given = Buffer.from(signature.trim().toLowerCase(), 'utf8');
  const expected = Buffer.from(termiiSignature(secretKey, rawBody), 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
