import { Pool } from 'undici';
import type { SendResult } from '../channels/provider-port.js';
import { systemClock } from '../domain/ports.js';
import { retryAfterMs } from '../webhooks/retry-policy.js';

/**
 * What the HTTP providers (Twilio, Vonage, Infobip, Africa's Talking, Termii, the operator's gateway) share, kept
 * in one place so that each rule exists once: how their URL and credential settings are read, how one request
 * goes out and its answer is read without trusting its size, how a Retry-After and a failed connection read, and
 * how a peer's own words are made safe to log. Nothing here sees a message's text or a credential's value in an
 * error message.
 */

/** Where a provider's API is: an origin for the connection pool and a path prefix (empty when at the root). */
export interface HttpBaseUrl {
  readonly origin: string;
  readonly pathPrefix: string;
}

/** The most of an answer's body read (for its JSON); a longer one is dropped unread. */
export const maxAnswerBytes = 64 * 1024;

/** Parses an http(s) URL setting without credentials (they have settings of their own); `example` is for the error. */
export function parseHttpUrl(raw: string, example: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`must be an http(s) URL, e.g. ${example}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`must be an http(s) URL, e.g. ${example}`);
  if (url.username || url.password) throw new Error('must not contain credentials (they have settings of their own)');
  return url;
}

/** The parser of a `<NAME>_BASE_URL` setting: an http(s) URL without credentials, query or fragment. */
export function parseBaseUrl(example: string): (raw: string) => HttpBaseUrl {
  return (raw) => {
    const url = parseHttpUrl(raw, example);
    if (url.search || url.hash) throw new Error('must not have a query or fragment');
    return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
  };
}

/**
 * The parser of a credential that goes into a body or a signature: any non-empty value without spaces around it.
 * The message never repeats the value.
 */
export function parseSecret(what: string): (raw: string) => string {
  return (raw) => {
    if (raw.trim() === '' || raw !== raw.trim()) throw new Error(`must be the ${what}, without spaces around it`);
    return raw;
  };
}

/**
 * The parser of a credential that goes into a header as it is: visible ASCII without spaces (anything else could
 * not be sent, or would split the header), and not too short to be real. The message never repeats the value.
 */
export function parseHeaderCredential(what: string): (raw: string) => string {
  return (raw) => {
    if (!/^[\x21-\x7e]+$/.test(raw)) throw new Error(`must be the ${what}: visible ASCII characters without spaces`);
    if (raw.length < 16) throw new Error(`is too short to be the ${what}`);
    return raw;
  };
}

/** The parser of a setting whose whole value must match `pattern`; `message` says what it must be. */
export function parseMatching(pattern: RegExp, message: string): (raw: string) => string {
  return (raw) => {
    if (!pattern.test(raw)) throw new Error(message);
    return raw;
  };
}

/** The parser of a setting that is one of a few words. */
export function parseOneOf<T extends string>(choices: readonly T[]): (raw: string) => T {
  return (raw) => {
    const choice = choices.find((c) => c === raw);
    if (choice === undefined) throw new Error(`must be one of ${choices.join(', ')}`);
    return choice;
  };
}

/** One answer of an API, as much of it as the providers decide by. */
export interface HttpAnswer {
  readonly status: number;
  readonly retryAfter: string | string[] | undefined;
  /** The body, or null when it was longer than maxAnswerBytes. */
  readonly body: Buffer | null;
}

/** One POST to an API: where, with which headers besides Accept and User-Agent, and what. */
export interface HttpPost {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * One keep-alive pool to a provider's API origin for the provider's whole life (a burst queues on its 16
 * sockets), and the one way a send goes out on it: a failed or timed-out request becomes a transient result
 * named after the provider, with nothing of what was sent.
 */
export class HttpApi {
  private readonly pool: Pool;
  private closing: Promise<void> | null = null;

  /** `label` starts every reason it gives ("Twilio", "gateway"). */
  constructor(
    origin: string,
    private readonly label: string,
  ) {
    this.pool = new Pool(origin, { connections: 16 });
  }

  /** Posts, reads at most maxAnswerBytes of the answer, and lets `decide` map it to a result. */
  post(request: HttpPost, signal: AbortSignal, decide: (answer: HttpAnswer) => SendResult): Promise<SendResult> {
    return this.ask(request, signal, decide, (reason) => ({ kind: 'transient', reason }));
  }

  /**
   * Posts as `post` does, for an answer of another kind than a send's (a verify service's check of a code):
   * `failed` says what a request that got no answer comes to, with its reason.
   */
  async ask<R>(request: HttpPost, signal: AbortSignal, decide: (answer: HttpAnswer) => R, failed: (reason: string) => R): Promise<R> {
    try {
      const answer = await this.pool.request({
        method: 'POST',
        path: request.path,
        headers: { accept: 'application/json', 'user-agent': 'otp-service', ...request.headers },
        body: request.body,
        signal,
      });
      const body = await readBounded(answer.body);
      return decide({ status: answer.statusCode, retryAfter: answer.headers['retry-after'], body });
    } catch (err) {
      if (signal.aborted) return failed(`${this.label}: no answer before the time-out`);
      return failed(`${this.label}: ${describeNetworkError(err)}`);
    }
  }

  /** Waits for sends in flight, then closes the pool's connections; safe to call more than once. */
  async close(): Promise<void> {
    this.closing ??= this.pool.close();
    await this.closing;
  }
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

/** A JSON object from a body or its text; null for anything else (empty, too long, not JSON, an array, a scalar). */
export function jsonObject(body: Buffer | string | null): Readonly<Record<string, unknown>> | null {
  if (body === null || body.length === 0) return null;
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return asObject(value);
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

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
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

/**
 * A number as Vonage, Termii and Infobip address it: E.164 without its + ("2348012345678"). Anything else (an
 * alphanumeric sender id) is left as it is.
 */
export function e164Digits(address: string): string {
  return /^\+\d+$/.test(address) ? address.slice(1) : address;
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
