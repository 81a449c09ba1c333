import { createHash, createHmac, createPrivateKey, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import { SignJWT } from 'jose';
import { asObject } from './http-provider.js';

/**
 * The two JWTs of Vonage's Voice API (https://developer.vonage.com/en/getting-started/concepts/authentication#json-web-tokens,
 * https://developer.vonage.com/en/getting-started/concepts/webhooks#signed-webhooks): requests to the API carry one
 * signed RS256 with the application's private key; Vonage's webhooks carry one signed HS256 with the account's
 * signature secret, whose `payload_hash` is the SHA-256 of the body.
 */

/** How long an application JWT we make is valid: one request's worth, with room for clocks apart. */
const applicationJwtSeconds = 300;
/** How old (or how far ahead) a signed webhook's `iat` may be: Vonage's SDKs allow 5 minutes. */
const maxWebhookAgeSeconds = 300;

/**
 * VONAGE_PRIVATE_KEY: the application's private key as PEM text (newlines may be written `\n`, as in a .env
 * file), or the path of the file that holds it (the private.key the dashboard downloads).
 */
export function parsePrivateKey(raw: string): KeyObject {
  const text = raw.includes('-----BEGIN') ? raw.replace(/\\n/g, '\n') : readKeyFile(raw.trim());
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch {
    throw new Error('is not a PEM private key (the private.key Vonage gave the application), nor the path of one');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new Error('must be the RSA private key Vonage gave the application');
  return key;
}

function readKeyFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new Error('is neither PEM text nor a readable file holding the application\'s private key');
  }
}

/** The Authorization of one request to the Voice API: a fresh RS256 JWT of the application. */
export async function applicationJwt(applicationId: string, key: KeyObject, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ application_id: applicationId })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + applicationJwtSeconds)
    .setJti(randomUUID())
    .sign(key);
}

export type WebhookCheck = { readonly valid: true; readonly claims: Readonly<Record<string, unknown>> } | { readonly valid: false; readonly reason: string };

const base64url = (part: string): Buffer | null => (/^[A-Za-z0-9_-]*$/.test(part) ? Buffer.from(part, 'base64url') : null);

function jsonPart(part: string): Readonly<Record<string, unknown>> | null {
  const bytes = base64url(part);
  if (bytes === null) return null;
  try {
    return asObject(JSON.parse(bytes.toString('utf8')));
  } catch {
    return null;
  }
}

/**
 * Checks a signed webhook: `Authorization: Bearer <JWT>`, HS256 only (a token naming another algorithm, `none`
 * included, is refused), its HMAC under the signature secret compared in constant time, `iat` within 5 minutes of
 * `now`, an `exp` not passed, and `payload_hash` equal to the SHA-256 (hex) of the raw body.
 */
export function checkSignedWebhook(secret: string, authorization: string | undefined, rawBody: Buffer, now: Date): WebhookCheck {
  const token = /^Bearer ([^\s]+)$/i.exec(authorization ?? '')?.[1];
  if (token === undefined) return { valid: false, reason: 'no Authorization: Bearer token' };
  const [head = '', body = '', signature = '', ...rest] = token.split('.');
  if (rest.length > 0 || signature === '') return { valid: false, reason: 'not a signed JWT' };
  const header = jsonPart(head);
  if (header?.alg !== 'HS256') return { valid: false, reason: 'not an HS256 JWT' };
  const given = base64url(signature);
  const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  if (given === null || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { valid: false, reason: 'JWT signature does not match VONAGE_SIGNATURE_SECRET' };
  }
  const claims = jsonPart(body);
  if (claims === null) return { valid: false, reason: 'JWT claims are not JSON' };
  const seconds = now.getTime() / 1000;
  if (typeof claims.iat !== 'number' || Math.abs(seconds - claims.iat) > maxWebhookAgeSeconds) return { valid: false, reason: 'iat missing or more than 5 minutes from now' };
  if (claims.exp !== undefined && (typeof claims.exp !== 'number' || claims.exp < seconds)) return { valid: false, reason: 'JWT expired' };
  const hash = createHash('sha256').update(rawBody).digest('hex');
  const claimed = typeof claims.payload_hash === 'string' ? Buffer.from(claims.payload_hash.toLowerCase()) : null;
  if (claimed === null || claimed.length !== hash.length || !timingSafeEqual(claimed, Buffer.from(hash))) {
    return { valid: false, reason: 'payload_hash does not match the body' };
  }
  return { valid: true, claims };
}
