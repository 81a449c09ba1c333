import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './types.js';

/** The request headers of a webhook: a fetch `Headers`, or Node's `req.headers` (names in lower case). */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** How far the `webhook-timestamp` may be from now, either way (Standard Webhooks: 5 minutes). */
  readonly toleranceSeconds?: number;
  /** The current time in ms since the epoch (for tests; `Date.now` by default). */
  readonly now?: () => number;
}

/** A webhook that is not the service's, altered, or too old: answer it 4xx and do nothing with it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

const events: ReadonlySet<string> = new Set<WebhookEvent['event']>(['action.otp.success', 'action.otp.failed', 'action.otp.expired']);

/**
 * Checks a webhook the service posted (contract 4: Standard Webhooks, `v1,` HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}`) and returns its event. `rawBody` must be the bytes as received,
 * before any JSON parsing. `secret` is the client's `whsec_...` signing secret, or several: during a rotation
 * the service signs with the new and the old one (several `v1,` signatures in the header), and any one match
 * is enough. Signatures are compared in constant time; a timestamp more than `toleranceSeconds` (300) away
 * from now is refused, so a captured request cannot be replayed later. Throws WebhookVerificationError.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const offered = header(headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || offered === undefined) {
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not unix seconds');
  const tolerance = options.toleranceSeconds ?? 300;
  const skew = Number(timestamp) - Math.floor((options.now ?? Date.now)() / 1000);
  if (skew < -tolerance) throw new WebhookVerificationError('webhook-timestamp is too old');
  if (skew > tolerance) throw new WebhookVerificationError('webhook-timestamp is in the future');

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new WebhookVerificationError('no signing secret given');
  const expected = secrets.map((s) => createHmac('sha256', signingKey(s)).update(`${id}.${timestamp}.`, 'utf8').update(body).digest());
  const candidates = offered
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  // Every pair is compared, each in constant time: how many signatures there are is no secret.
  let matched = false;
  for (const candidate of candidates) {
    for (const mine of expected) {
      if (candidate.length === mine.length && timingSafeEqual(candidate, mine)) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('no webhook-signature matches');
  return parseEvent(body);
}

/** The key bytes of a `whsec_<base64>` secret (Standard Webhooks). */
function signingKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('the signing secret is empty or not base64');
  return key;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  // A header sent twice is refused rather than guessed at.
  if (typeof value !== 'string') return undefined;
  return value === '' ? undefined : value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The signed body as the event it is: checked for the fields a receiver acts on. */
function parseEvent(body: Uint8Array): WebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('the signed body is not JSON');
  }
  if (!isObject(parsed) || typeof parsed.event !== 'string' || !events.has(parsed.event) || !isObject(parsed.data)) {
    throw new WebhookVerificationError('the signed body is not a verification event');
  }
  const { data } = parsed;
  if (typeof data.id !== 'string' || typeof data.status !== 'string') {
    throw new WebhookVerificationError('the signed body is not a verification event');
  }
  // Signed by the service, which serializes it with the WebhookEvent schema the type is generated from.
  return parsed as WebhookEvent;
}
