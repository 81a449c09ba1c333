import { backoffMs, retryAfterMs, sleep, type RetryNotice, type RetryPolicy } from './retry.js';
import { OtpConnectionError } from './errors.js';

/** Supplies the bearer token of a request, and hears when the service refused one. */
export interface Authorizer {
  /** A token to send: the cached one, or a new one when it is near its end. */
  token(signal: AbortSignal | undefined): Promise<string>;
  /** The service answered 401 `invalid_token` to this token: the next `token()` fetches a new one. */
  refused(token: string): void;
}

/** How one request may be sent. */
export interface SendPolicy {
  /**
   * Whether the request may be sent again when no answer came (a lost connection, a time-out, a 503): true for
   * reads and for creates with an Idempotency-Key, where a repeat does nothing twice. A 429 is retried whatever
   * this says: the service did nothing.
   */
  readonly repeatable: boolean;
  /** The caller's own signal: aborting it ends the call at once, waits included. */
  readonly signal?: AbortSignal | undefined;
  /** Adds a bearer token; absent for the token request itself. */
  readonly authorizer?: Authorizer;
}

export interface TransportOptions {
  readonly fetch: typeof fetch;
  /** The longest one attempt may take, its answer's body included. */
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly onRetry: ((notice: RetryNotice) => void) | undefined;
  readonly now: () => number;
}

/** Statuses whose answers have no body (the Response constructor refuses one). */
const nullBodyStatuses = new Set([204, 205, 304]);

type Attempt = { readonly response: Response } | { readonly error: unknown; readonly timedOut: boolean };

/**
 * Sends the requests openapi-fetch builds (it is openapi-fetch's `fetch`): with a bearer token, each attempt
 * within the time-out, a refused token renewed once, and the retries the policy allows after the wait the
 * service asked for (`Retry-After`) or a short backoff.
 */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  /** The `fetch` to give openapi-fetch for one call. */
  fetcher(policy: SendPolicy): (request: Request) => Promise<Response> {
    return (request) => this.send(request, policy);
  }

  async send(request: Request, policy: SendPolicy): Promise<Response> {
    const { retry, onRetry, now } = this.options;
    // Read once: every attempt sends the same bytes (bodies are small: the service takes 16 KiB at most).
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    let retries = 0;
    let tokenRenewed = false;
    for (;;) {
      const headers = new Headers(request.headers);
      const token = policy.authorizer ? await policy.authorizer.token(policy.signal) : null;
      if (token !== null) headers.set('authorization', `Bearer ${token}`);
      // A redirect is handed back as the answer it is (an unexpected one), never followed with the token.
      const outcome = await this.attempt(request.url, { method: request.method, headers, body, redirect: 'manual' }, policy.signal);
      let reason: RetryNotice['reason'];
      let waitMs: number;
      if ('error' in outcome) {
        if (!policy.repeatable || retries >= retry.maxRetries) throw connectionError(request, outcome.error, outcome.timedOut);
        reason = 'connection';
        waitMs = backoffMs(retries + 1);
      } else {
        const { response } = outcome;
        if (token !== null && policy.authorizer && response.status === 401 && !tokenRenewed && refusedToken(response)) {
          // The token expired or was revoked earlier than the client reckoned (clock skew, a new signing key):
          // one new token and one more try; the service did nothing with the refused request.
          tokenRenewed = true;
          policy.authorizer.refused(token);
          await discard(response);
          onRetry?.({ retry: retries + 1, reason: 'token-refused', waitMs: 0, method: request.method, url: request.url });
          continue;
        }
        const retryable = response.status === 429 || (response.status === 503 && policy.repeatable);
        if (!retryable || retries >= retry.maxRetries) return response;
        waitMs = retryAfterMs(response.headers.get('retry-after'), now()) ?? backoffMs(retries + 1);
        if (waitMs > retry.maxWaitMs) return response;
        reason = response.status === 429 ? 'rate-limited' : 'unavailable';
        await discard(response);
      }
      retries += 1;
      onRetry?.({ retry: retries, reason, waitMs, method: request.method, url: request.url });
      await sleep(waitMs, policy.signal);
    }
  }

  private async attempt(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await this.options.fetch(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      // The body is read here, within the same time-out: a stall mid-body is a failed attempt like any other.
      const bytes = nullBodyStatuses.has(response.status) ? null : await response.arrayBuffer();
      return { response: new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers }) };
    } catch (error) {
      // The caller gave up: no retry, and their own reason.
      if (signal?.aborted) throw signal.reason;
      return { error, timedOut: timeout.aborted };
    }
  }
}

/** A 401 that says the token itself was refused (RFC 6750 3.1), not that none was sent. */
function refusedToken(response: Response): boolean {
  return /error="invalid_token"/.test(response.headers.get('www-authenticate') ?? '');
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function connectionError(request: Request, cause: unknown, timedOut: boolean): OtpConnectionError {
  const what = `${request.method} ${new URL(request.url).pathname}`;
  const why = timedOut ? 'no answer within the time-out' : cause instanceof Error ? cause.message : String(cause);
  return new OtpConnectionError(`${what}: ${why}`, timedOut, { cause });
}
