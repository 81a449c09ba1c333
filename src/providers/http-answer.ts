import { systemClock } from '../domain/ports.js';
import { retryAfterMs } from '../webhooks/retry-policy.js';

/**
 * Reading what an HTTP provider answered, the same way for every provider: bounded, never echoing what was
 * sent, and with the peer's own words made safe to log.
 */

/** Reads at most `limit` bytes of a body and drops the rest; null when it was longer. */
export async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<Buffer | null> {
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

/** A JSON object answer, or null when the body is empty, too long, not JSON or not an object. */
export function jsonObject(body: Buffer | null): Readonly<Record<string, unknown>> | null {
  if (body === null || body.length === 0) return null;
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Retry-After header in whole seconds from now, or undefined when absent or unreadable. */
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

/** Control, format (bidi overrides) and line-separator characters: they could forge or garble a log line. */
const unprintable = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu;
const anyUnprintable = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * A peer's own words (an error message, a receipt's detail) made safe to log: every `hidden` string replaced by
 * ******, control characters gone, whitespace collapsed, at most `max` characters; null when nothing is left.
 */
export function sanitized(raw: string, hidden: readonly string[] = [], max = 200): string | null {
  let text = raw.replace(unprintable, ' ');
  for (const secret of hidden) if (secret !== '') text = text.split(secret).join('******');
  text = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(text);
  if (chars.length === 0) return null;
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/** An id a peer chose (a message id) that can be stored and logged as it is: 1 to 200 printable characters. */
export function isPrintableId(value: unknown): value is string {
  if (typeof value !== 'string' || value === '' || Array.from(value).length > 200) return false;
  return !anyUnprintable.test(value);
}
