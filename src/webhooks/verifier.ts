import { timingSafeEqual } from 'node:crypto';
import { signature } from './signer.js';

/** How far a signed request's timestamp may be from now, either way: Standard Webhooks' own tolerance. */
export const signatureToleranceSeconds = 5 * 60;

/** The outcome of checking one signed request: the reason is safe to log and to answer with. */
export type SignatureCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Checks a request signed the Standard Webhooks way (the inverse of signer.ts): `webhook-id`,
 * `webhook-timestamp` (unix seconds, within five minutes of `now`) and `webhook-signature`, a space-separated
 * list of `v1,<base64>` of which any one may match any of `secrets`. Compared in constant time.
 */
export function checkSignature(
  secrets: readonly string[],
  headers: Readonly<Record<string, string | undefined>>,
  rawBody: Buffer,
  now: Date,
): SignatureCheck {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const offered = headers['webhook-signature'];
  if (!id || !timestamp || !offered) {
    return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'webhook-timestamp is not unix seconds' };
  const seconds = Number(timestamp);
  const skew = seconds - Math.floor(now.getTime() / 1000);
  if (skew < -signatureToleranceSeconds) return { ok: false, reason: 'webhook-timestamp is too old' };
  if (skew > signatureToleranceSeconds) return { ok: false, reason: 'webhook-timestamp is in the future' };
  // Signed over the body as text, as signer.ts signs: a body that is not UTF-8 cannot match.
  const body = rawBody.toString('utf8');
  const expected = secrets.map((secret) => Buffer.from(signature(secret, id, seconds, body)));
  const candidates = offered.split(' ').filter((s) => s.startsWith('v1,')).map((s) => Buffer.from(s));
  const matches = candidates.some((candidate) =>
    expected.some((mine) => mine.length === candidate.length && timingSafeEqual(mine, candidate)),
  );
  return matches ? { ok: true } : { ok: false, reason: 'webhook-signature does not match' };
}
