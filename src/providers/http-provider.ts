import type { SendResult } from '../channels/provider-port.js';
import { systemClock } from '../domain/ports.js';
import { retryAfterMs } from '../webhooks/retry-policy.js';

/**
 * What the HTTP SMS providers share: reading their base URL setting, reading an answer without trusting its
 * size, and describing a failed request without anything that was sent.
 */

/** Where a provider's API is: an origin for the connection pool and a path prefix (empty for the provider itself). */
export interface HttpBaseUrl {
  readonly origin: string;
  readonly pathPrefix: string;
}

/** The most of an answer's body read (for its JSON); the rest is dropped. */
export const maxAnswerBytes = 64 * 1024;

/** Parses a `<NAME>_BASE_URL` setting; `example` is the provider's own, for the error message. */
export function parseBaseUrl(raw: string, example: string): HttpBaseUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`must be an http(s) URL, e.g. ${example}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`must be an http(s) URL, e.g. ${example}`);
  if (url.username || url.password) throw new Error('must not contain credentials (they have settings of their own)');
  if (url.search || url.hash) throw new Error('must not have a query or fragment');
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

/** Parses a credential: any non-empty value without spaces around it. The message never repeats the value. */
export function parseSecret(what: string): (raw: string) => string {
  return (raw) => {
    if (raw.trim() === '' || raw !== raw.trim()) throw new Error(`must be the ${what}, without spaces around it`);
    return raw;
  };
}

/** Reads at most `limit` bytes of a body and drops the rest; null when it was longer. */
export async function readBounded(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  limit = maxAnswerBytes,
): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body) {
      length += chunk.length;
      if (length > limit) return null;
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  } finally {
    body.destroy();
  }
}

/** A JSON object, or null when the text is not one. */
export function parseJsonObject(text: Buffer | string | null): Readonly<Record<string, unknown>> | null {
  if (text === null || text.length === 0) return null;
  try {
    const value: unknown = JSON.parse(text.toString());
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : null;
  } catch {
    return null;
  }
}

/**
 * A message id field of a JSON object as a string. Termii sends 19-digit ids that may be JSON numbers, which
 * JSON.parse rounds: an unsafe integer is read back from the raw text, and only when that text names it once.
 */
export function idField(object: Readonly<Record<string, unknown>>, name: string, rawText: string): string | null {
  const value = object[name];
  if (typeof value === 'string') return value.trim() === '' ? null : value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return null;
  if (Number.isSafeInteger(value)) return String(value);
  const matches = [...rawText.matchAll(new RegExp(`"${name}"\\s*:\\s*(\\d+)`, 'g'))];
  return matches.length === 1 ? (matches[0]?.[1] ?? null) : null;
}

/** A transient result, with the provider's Retry-After (seconds or HTTP date) when it gave a readable one. */
export function transient(reason: string, retryAfter: string | string[] | undefined): SendResult {
  const ms = typeof retryAfter === 'string' ? retryAfterMs(retryAfter, systemClock.now()) : null;
  return ms === null ? { kind: 'transient', reason } : { kind: 'transient', reason, retryAfterSeconds: Math.ceil(ms / 1000) };
}

/** A short description of a failed request (refused, reset, closed mid-answer), with nothing of what was sent. */
export function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return 'request failed';
  const code = 'code' in err && typeof err.code === 'string' ? `${err.code} ` : '';
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${code}${err.message}${cause}`.slice(0, 300);
}

/** E.164 without its +, as Vonage and Termii address numbers ("2348012345678"). */
export function e164Digits(number: string): string {
  return number.startsWith('+') ? number.slice(1) : number;
}
