import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './api.js';
import { serviceErrorFrom } from './errors.js';
import { retryAfterMs, type RetryNotice } from './retry.js';
import { TokenSource } from './token-source.js';
import { Transport } from './transport.js';
import type {
  CreateVerificationBody,
  DailyStats,
  LookupBody,
  LookupRecord,
  Scope,
  StatsQuery,
  VerificationRecord,
  WebhookDelivery,
} from './types.js';

export interface OtpClientOptions {
  /** Where the service answers, e.g. `https://otp.example.com` (a path prefix is kept). */
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The scopes to ask for; absent: all the client is registered for. */
  readonly scopes?: readonly Scope[];
  /** The longest one attempt may take, answer included (default 10000 ms); each retry gets as long again. */
  readonly timeoutMs?: number;
  /** Retries of one call after a 429, a 503 or a lost connection (default 3; 0: none). */
  readonly maxRetries?: number;
  /** The longest wait for one retry (default 60 s): a `Retry-After` beyond it is thrown at once, not waited for. */
  readonly maxRetryWaitSeconds?: number;
  /** Told of each retry before its wait (e.g. to log it). */
  readonly onRetry?: (notice: RetryNotice) => void;
  /** The fetch to send with (default: the global one), e.g. one with a proxy agent. */
  readonly fetch?: typeof fetch;
  /** The current time in ms since the epoch, against which tokens are renewed (default `Date.now`). */
  readonly now?: () => number;
}

/** Options of any one call. */
export interface CallOptions {
  /** Aborts the call, its waits included. */
  readonly signal?: AbortSignal;
}

export interface CreateOptions extends CallOptions {
  /**
   * Sent as `Idempotency-Key`: a repeat within 24 h returns the first verification and sends nothing new. With
   * one, a create whose answer was lost is sent again; without one it is not (it could send a second code).
   */
  readonly idempotencyKey?: string;
}

type Envelope<T> = { readonly data: T };

/** What openapi-fetch resolves a call to (its data, or its parsed error body, and the response). */
type Answer<T> = { data?: Envelope<T> | undefined; error?: unknown; response: Response };

/**
 * The service's API (contract 12). Every method returns the record (the envelope's `data`) or throws:
 * OtpServiceError for an error answer (switch on `code`), OtpAuthError when the token endpoint refuses the
 * credentials, OtpConnectionError when no answer came in time. Tokens are fetched, cached and renewed
 * shortly before they expire; a 429 is waited out (`Retry-After`) and retried.
 */
export class OtpClient {
  private readonly api: Client<paths>;
  private readonly transport: Transport;
  private readonly tokens: TokenSource;

  constructor(options: OtpClientOptions) {
    const now = options.now ?? Date.now;
    this.api = createClient<paths>({ baseUrl: options.baseUrl });
    this.transport = new Transport({
      fetch: options.fetch ?? globalThis.fetch,
      timeoutMs: positive(options.timeoutMs ?? 10_000, 'timeoutMs'),
      retry: {
        maxRetries: nonNegative(options.maxRetries ?? 3, 'maxRetries'),
        maxWaitMs: nonNegative(options.maxRetryWaitSeconds ?? 60, 'maxRetryWaitSeconds') * 1000,
      },
      onRetry: options.onRetry,
      now,
    });
    this.tokens = new TokenSource({
      api: this.api,
      transport: this.transport,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      scopes: options.scopes,
      now,
    });
  }

  /** `POST /v1/otp/request`: creates a verification and sends its code (scope `otp:send`). */
  createVerification(body: CreateVerificationBody, options: CreateOptions = {}): Promise<VerificationRecord> {
    const { idempotencyKey, signal } = options;
    return this.unwrap(
      this.api.POST('/v1/otp/request', {
        body,
        params: { header: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey } },
        fetch: this.fetcher(idempotencyKey !== undefined, signal),
      }),
    );
  }

  /** `GET /v1/otp/{id}` (scope `otp:send` or `otp:verify`). */
  getVerification(id: string, options: CallOptions = {}): Promise<VerificationRecord> {
    return this.unwrap(this.api.GET('/v1/otp/{id}', { params: { path: { id } }, fetch: this.fetcher(true, options.signal) }));
  }

  /**
   * `POST /v1/otp/verify` (scope `otp:verify`): the record, `SUCCESS`. A wrong code throws `OTP_MISMATCH` with
   * the record in `data` (`FAILED` after the last attempt); one no longer pending, `VERIFICATION_NOT_PENDING`.
   */
  verify(id: string, otp: string, options: CallOptions = {}): Promise<VerificationRecord> {
    return this.unwrap(this.api.POST('/v1/otp/verify', { body: { id, otp }, fetch: this.fetcher(false, options.signal) }));
  }

  /** `POST /v1/otp/{id}/resend`: the same code again (scope `otp:send`); the cool-down's 429 is waited out. */
  resend(id: string, options: CallOptions = {}): Promise<VerificationRecord> {
    return this.unwrap(this.api.POST('/v1/otp/{id}/resend', { params: { path: { id } }, fetch: this.fetcher(false, options.signal) }));
  }

  /** `POST /v1/otp/{id}/cancel`: `FAILED` with `failureReason` `CANCELED` (scope `otp:send`). */
  cancel(id: string, options: CallOptions = {}): Promise<VerificationRecord> {
    return this.unwrap(this.api.POST('/v1/otp/{id}/cancel', { params: { path: { id } }, fetch: this.fetcher(false, options.signal) }));
  }

  /**
   * `POST /v1/lookup/request` (scope `lookup:request`): what the number metadata says of a number; an invalid
   * number is a lookup with `valid: false`, not an error. Sent again when no answer came: a repeat sends nothing,
   * it only records a second lookup.
   */
  lookup(body: LookupBody, options: CallOptions = {}): Promise<LookupRecord> {
    return this.unwrap(this.api.POST('/v1/lookup/request', { body, fetch: this.fetcher(true, options.signal) }));
  }

  /** `GET /v1/lookup/{id}` (scope `lookup:status`). */
  getLookup(id: string, options: CallOptions = {}): Promise<LookupRecord> {
    return this.unwrap(this.api.GET('/v1/lookup/{id}', { params: { path: { id } }, fetch: this.fetcher(true, options.signal) }));
  }

  /** `GET /v1/otp/{id}/webhooks`: the verification's webhook events and their delivery attempts. */
  getWebhookDeliveries(id: string, options: CallOptions = {}): Promise<WebhookDelivery[]> {
    return this.unwrap(this.api.GET('/v1/otp/{id}/webhooks', { params: { path: { id } }, fetch: this.fetcher(true, options.signal) }));
  }

  /**
   * `GET /v1/stats` (scope `otp:send` or `otp:verify`): the client's sends, deliveries and verifications per UTC
   * day and country, ordered by day then region; `from` and `to` are YYYY-MM-DD, both included (default: the
   * last 7 days). A day that is not a calendar day, `from` after `to` or over 366 days throws `VALIDATION_ERROR`.
   */
  getStats(query: StatsQuery = {}, options: CallOptions = {}): Promise<DailyStats[]> {
    return this.unwrap(this.api.GET('/v1/stats', { params: { query }, fetch: this.fetcher(true, options.signal) }));
  }

  private fetcher(repeatable: boolean, signal: AbortSignal | undefined): (request: Request) => Promise<Response> {
    return this.transport.fetcher({ repeatable, signal, authorizer: this.tokens });
  }

  private async unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
    const { data, error, response } = await call;
    if (response.ok && data !== undefined) return data.data;
    const retryAfter = retryAfterMs(response.headers.get('retry-after'), Date.now());
    throw serviceErrorFrom(response.status, error ?? data, retryAfter === null ? null : Math.ceil(retryAfter / 1000));
  }
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!(value >= 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be zero or more`);
  return value;
}
