import type { Client } from 'openapi-fetch';
import type { paths } from './api.js';
import { authErrorFrom, OtpAuthError, unexpectedResponse } from './errors.js';
import { abortable } from './retry.js';
import type { Authorizer, Transport } from './transport.js';
import type { Scope } from './types.js';

export interface TokenSourceOptions {
  readonly api: Client<paths>;
  readonly transport: Transport;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The scopes to ask for; absent: all the client is registered for. */
  readonly scopes: readonly Scope[] | undefined;
  readonly now: () => number;
}

interface CachedToken {
  readonly value: string;
  /** When to fetch the next one (ms since the epoch): a little before this one expires. */
  readonly renewAt: number;
}

/** How long before its expiry a token is replaced: 60 s, or a tenth of its lifetime when that is shorter. */
export function renewalMarginMs(lifetimeMs: number): number {
  return Math.min(60_000, lifetimeMs / 10);
}

/**
 * Access tokens by the client-credentials grant (RFC 6749 4.4) at `POST /oauth2/token`, the client
 * authenticated with HTTP Basic (2.3.1). One token is cached and used until shortly before it expires; then
 * the next call fetches another. However many calls need a token at once, one token request is in flight.
 */
export class TokenSource implements Authorizer {
  private cached: CachedToken | null = null;
  private pending: Promise<CachedToken> | null = null;
  private readonly basic: string;

  constructor(private readonly options: TokenSourceOptions) {
    this.basic = `Basic ${Buffer.from(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`).toString('base64')}`;
  }

  async token(signal: AbortSignal | undefined): Promise<string> {
    const { cached } = this;
    if (cached && this.options.now() < cached.renewAt) return cached.value;
    // The shared request is not the caller's: one caller giving up stops waiting, not the request.
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = null;
    });
    return (await abortable(this.pending, signal)).value;
  }

  refused(token: string): void {
    if (this.cached?.value === token) this.cached = null;
  }

  private async fetchToken(): Promise<CachedToken> {
    const { api, transport, scopes, now } = this.options;
    // Counted from before the request: the token's lifetime started at the latest when the service answered.
    const requestedAt = now();
    const { data, error, response } = await api.POST('/oauth2/token', {
      body: { grant_type: 'client_credentials', ...(scopes !== undefined && { scope: scopes.join(' ') }) },
      bodySerializer: (body) => new URLSearchParams(body).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: this.basic },
      // A token request changes nothing at the service: repeating it is harmless.
      fetch: transport.fetcher({ repeatable: true }),
    });
    if (data === undefined) throw authErrorFrom(response.status, error);
    const { access_token: value, expires_in: expiresIn } = data;
    if (typeof value !== 'string' || value === '' || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
      throw new OtpAuthError(response.status, unexpectedResponse, 'token endpoint answered 200 without access_token and expires_in');
    }
    const lifetimeMs = expiresIn * 1000;
    const token = { value, renewAt: requestedAt + lifetimeMs - renewalMarginMs(lifetimeMs) };
    this.cached = token;
    return token;
  }
}

/** application/x-www-form-urlencoded, as RFC 6749 2.3.1 asks of the id and secret before base64. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
