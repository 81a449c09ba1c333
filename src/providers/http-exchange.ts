import { systemClock } from '../domain/ports.js';
import { retryAfterMs } from '../webhooks/retry-policy.js';

/**
 * What the HTTP providers share in one exchange with their API: where it is, how much of an answer is read,
 * how a Retry-After and a failed connection read. Nothing here sees a message's text or a credential.
 */

/** Where an API is: an origin for the connection pool and a path prefix (empty when the API is at the root). */
export interface BaseUrl {
  readonly origin: string;
  readonly pathPrefix: string;
}

/** The most of an answer's body read (for its JSON); a longer one is dropped unread. */
export const maxAnswerBytes = 64 * 1024;

/** Parses a `<NAME>_BASE_URL` setting: an http(s) URL without credentials, query or fragment. */
export function parseBaseUrl(raw: string, example: string): BaseUrl {
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

/** Parses an API key or token that goes into a header: visible ASCII, no spaces, not too short to be real. */
export function parseHeaderCredential(raw: string, what: string): string {
  if (!/^[\x21-\x7e]+$/.test(raw)) throw new Error(`must be the ${what}: visible ASCII characters without spaces`);
  if (raw.length < 16) throw new Error(`is too short to be the ${what}`);
  return raw;
}

/** Reads at most `limit` bytes of a body and drops the rest; null when it was longer. */
export async function readBounded(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  limit: number = maxAnswerBytes,
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

/** A JSON object from a body; null for anything else (empty, not JSON, an array, a scalar). */
export function jsonObject(body: Buffer | null): Readonly<Record<string, unknown>> | null {
  if (body === null || body.length === 0) return null;
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/** The value as a plain object, or null. */
export function asObject(value: unknown): Readonly<Record<string, unknown>> | null {
  return isRecord(value) ? value : null;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty string, or null. */
export function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A Retry-After header (seconds or HTTP date) in whole seconds; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string') return undefined;
  const ms = retryAfterMs(header, systemClock.now());
  return ms === null ? undefined : Math.ceil(ms / 1000);
}

/** A short description of a failed request (refused, reset, closed mid-answer), with nothing of what was sent. */
export function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return 'request failed';
  const code = 'code' in err && typeof err.code === 'string' ? `${err.code} ` : '';
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${code}${err.message}${cause}`.slice(0, 300);
}

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}
