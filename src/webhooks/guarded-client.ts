import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request } from 'undici';
import { AddressGuard, systemLookup, type LookupAll, type ResolvedAddress } from './address-guard.js';
import type { AllowedNetworks } from './allowed-networks.js';

/** One webhook POST to send. */
export interface DeliveryRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What came of it. A response of any status is a response; everything else (refused, timeout...) is an error. */
export type DeliveryResponse =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly retryAfter: string | null;
      readonly durationMs: number;
      /** The body as text, when asked for (`keepBody`), cut at the client's cap. */
      readonly body?: string;
    }
  | { readonly kind: 'error'; readonly error: string; readonly durationMs: number; readonly timedOut?: true };

/** Sends webhooks (port of the delivery worker). */
export interface WebhookHttpClient {
  post(request: DeliveryRequest, options?: PostOptions): Promise<DeliveryResponse>;
  close(): Promise<void>;
}

/** One POST's own bounds: a shorter time than the client's, and whether its answer's body is read. */
export interface PostOptions {
  readonly timeoutMs?: number;
  readonly keepBody?: boolean;
}

export interface GuardedClientOptions {
  /** The whole attempt (lookup, connect, answer) must end within this (WEBHOOK_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
  readonly allowPrivateNetworks: boolean;
  /** WEBHOOK_ALLOWED_NETWORKS: the private ranges and names delivered to all the same. */
  readonly allowedNetworks?: AllowedNetworks;
  readonly lookup?: LookupAll;
  /** The most of a response body read before it is dropped; it is discarded either way. */
  readonly maxResponseBytes?: number;
  readonly userAgent?: string;
}

/** A destination the address guard refused; carried out of the connector as the request's error. */
export class DestinationRefusedError extends Error {
  override name = 'DestinationRefusedError';
}

/**
 * The HTTP client of webhook delivery: every new connection goes through the address guard and is opened to
 * the addresses it checked; redirects are not followed (undici's request never does), the answer must come
 * within the timeout, and at most `maxResponseBytes` of the body are read and thrown away.
 */
export class GuardedHttpClient implements WebhookHttpClient {
  private readonly agent: Agent;
  private readonly maxResponseBytes: number;
  private closing: Promise<void> | null = null;

  constructor(private readonly options: GuardedClientOptions) {
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
    const guard = new AddressGuard(options.allowPrivateNetworks, options.lookup ?? systemLookup, options.allowedNetworks);
    const connectTimeout = options.timeoutMs;
    this.agent = new Agent({
      connect: (connectOptions, callback) => {
        guard.check(connectOptions.hostname).then(
          (checked) => {
            if (!checked.ok) {
              callback(new DestinationRefusedError(checked.reason), null);
              return;
            }
            // A connector per connection, whose lookup can only answer with the addresses just checked.
            const connect = buildConnector({ timeout: connectTimeout, lookup: pinnedLookup(checked.addresses) });
            connect(connectOptions, callback);
          },
          (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
        );
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  async post(delivery: DeliveryRequest, options: PostOptions = {}): Promise<DeliveryResponse> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const problem = urlProblem(delivery.url);
    if (problem) return { kind: 'error', error: problem, durationMs: 0 };
    const timeoutMs = Math.min(options.timeoutMs ?? this.options.timeoutMs, this.options.timeoutMs);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await request(delivery.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': this.options.userAgent ?? 'otp-service-webhooks/1',
          ...delivery.headers,
        },
        body: delivery.body,
        signal: controller.signal,
        dispatcher: this.agent,
      });
      const durationMs = elapsed();
      const body = await this.readBody(response.body, options.keepBody === true);
      const retryAfter = response.headers['retry-after'];
      return {
        kind: 'response',
        status: response.statusCode,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
        durationMs,
        ...(options.keepBody && { body }),
      };
    } catch (err) {
      if (controller.signal.aborted) return { kind: 'error', error: `timeout: no answer within ${timeoutMs} ms`, durationMs: elapsed(), timedOut: true };
      return { kind: 'error', error: describe(err), durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes idle connections; safe to call more than once. */
  async close(): Promise<void> {
    this.closing ??= this.agent.close();
    await this.closing;
  }

  /** Reads the body up to the cap, within the attempt's time; keeps it as text only when asked to. */
  private async readBody(body: AsyncIterable<Buffer> & { destroy(): unknown }, keep: boolean): Promise<string> {
    let read = 0;
    const kept: Buffer[] = [];
    try {
      for await (const chunk of body) {
        read += chunk.length;
        if (keep) kept.push(chunk);
        if (read >= this.maxResponseBytes) break;
      }
    } catch {
      // A webhook's status is what counts, and a body cut short (timeout, reset) changes nothing; a decision
      // reads what came, which then does not parse.
    } finally {
      body.destroy();
    }
    return keep ? Buffer.concat(kept).toString('utf8') : '';
  }
}

/** Why a stored webhook URL cannot be sent to, or null. */
function urlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'invalid webhook URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'webhook URL must use http or https';
  if (url.username || url.password) return 'webhook URL must not contain credentials';
  return null;
}

/** A `lookup` for net.connect that answers only with addresses the guard already checked. */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const usable = wanted.length > 0 ? wanted : addresses;
    if (options.all) {
      callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
      return;
    }
    const first = usable[0];
    if (!first) {
      callback(Object.assign(new Error('no checked address'), { code: 'ENOTFOUND' }), '', 4);
      return;
    }
    callback(null, first.address, first.family);
  };
}

/** A short, secret-free description of a failed attempt. */
function describe(err: unknown): string {
  if (err instanceof DestinationRefusedError) return err.message;
  if (err instanceof Error) {
    const code = (err as Error & { code?: unknown }).code;
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    const text = `${typeof code === 'string' ? `${code} ` : ''}${err.message}${cause}`;
    return text.length > 500 ? `${text.slice(0, 497)}...` : text;
  }
  return String(err).slice(0, 500);
}
