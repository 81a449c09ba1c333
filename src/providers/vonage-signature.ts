import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Vonage's signed requests (https://developer.vonage.com/getting-started/concepts/signing-messages): the same
 * scheme signs what we send (SMS API `sig`) and what Vonage sends us (delivery receipts, once signed webhooks are
 * enabled on the account). The signature method is chosen on the Vonage dashboard; its default is "MD5 hash".
 */
export const vonageSignatureMethods = ['md5hash', 'md5', 'sha1', 'sha256', 'sha512'] as const;
export type VonageSignatureMethod = (typeof vonageSignatureMethods)[number];

/** How far a signed request's `timestamp` may be from our clock, either way (Vonage's SDKs allow 5 minutes). */
export const maxTimestampSkewMs = 5 * 60 * 1000;

/**
 * The string Vonage signs: every parameter but `sig`, sorted by name, each as `&name=value`, with `&` and `=`
 * inside names and values replaced by `_` (the string starts with `&`).
 */
export function vonageSigningString(params: Iterable<readonly [string, string]>): string {
  const clean = (s: string) => s.replace(/[&=]/g, '_');
  return [...params]
    .filter(([name]) => name !== 'sig')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `&${clean(name)}=${clean(value)}`)
    .join('');
}

/**
 * The signature of `params` in lower-case hex: `md5hash` is MD5 of the signing string followed by the secret,
 * the others an HMAC of the signing string keyed by the secret.
 */
export function vonageSignature(
  secret: string,
  method: VonageSignatureMethod,
  params: Iterable<readonly [string, string]>,
): string {
  const data = vonageSigningString(params);
  if (method === 'md5hash') return createHash('md5').update(data + secret, 'utf8').digest('hex');
  return createHmac(method, secret).update(data, 'utf8').digest('hex');
}

export type VonageSignatureCheck = { readonly valid: true } | { readonly valid: false; readonly reason: string };

/**
 * Checks a signed request's `sig` (hex, either case) and its `timestamp` (Unix seconds, within 5 minutes of
 * `now`). Vonage's own checkers differ on parameters with empty values (the Node and Python SDKs sign them,
 * the Java SDK leaves them out), so both forms are tried, each compared in constant time.
 */
export function checkVonageSignature(
  secret: string,
  method: VonageSignatureMethod,
  params: ReadonlyMap<string, string>,
  now: Date,
): VonageSignatureCheck {
  const sig = params.get('sig');
  if (sig === undefined || sig === '') return { valid: false, reason: 'no sig parameter' };
  const timestamp = params.get('timestamp');
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) return { valid: false, reason: 'no timestamp parameter' };
  if (Math.abs(now.getTime() - Number(timestamp) * 1000) > maxTimestampSkewMs) {
    return { valid: false, reason: 'timestamp more than 5 minutes from now' };
  }
  const given = Buffer.from(sig.toLowerCase(), 'utf8');
  const all = [...params];
  const candidates = new Set([
    vonageSignature(secret, method, all),
    vonageSignature(secret, method, all.filter(([, value]) => value.trim() !== '')),
  ]);
  let valid = false;
  for (const candidate of candidates) {
    const expected = Buffer.from(candidate, 'utf8');
    if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true;
  }
  return valid ? { valid: true } : { valid: false, reason: 'sig does not match' };
}
