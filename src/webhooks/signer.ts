import { createHmac } from 'node:crypto';

/** Prefix of a Standard Webhooks signing secret; the rest is the base64 key. */
const secretPrefix = 'whsec_';

/** The key bytes of a `whsec_...` secret (a secret without the prefix is read as base64 too). */
export function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook signing secret is empty');
  return key;
}

/** One `v1,<base64>` signature: HMAC-SHA256 over `${id}.${timestamp}.${body}` (Standard Webhooks). */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/** The `webhook-signature` value: one signature per secret, space-separated (a receiver accepts any). */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  if (secrets.length === 0) throw new Error('no webhook signing secret');
  return secrets.map((s) => signature(s, id, timestampSeconds, body)).join(' ');
}

/** A client's webhook secrets as stored. */
export interface ClientSecrets {
  readonly current: string;
  readonly previous: string | null;
  readonly previousExpiresAt: Date | null;
}

/** The secrets to sign with at `now`: the current one, and the rotated-out one while it is still valid. */
export function activeSecrets(secrets: ClientSecrets, now: Date): string[] {
  const { current, previous, previousExpiresAt } = secrets;
  const previousValid = previous !== null && previousExpiresAt !== null && previousExpiresAt.getTime() > now.getTime();
  return previousValid && previous !== current ? [current, previous] : [current];
}

/** The headers of one signed attempt; the timestamp is fresh on every attempt, the id never changes. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  at: Date,
  body: string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, id, timestamp, body),
  };
}
