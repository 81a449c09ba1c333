import { request } from 'undici';
import type { Clock } from '../domain/ports.js';
import { jsonObject, readBounded } from '../providers/http-provider.js';

/** Where CAMARA's client-credentials tokens come from, and as whom. */
export interface CamaraCredentials {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** A token is used until this long before it expires, so that none expires on its way to the API. */
const marginMs = 30_000;
/** A token endpoint that names no lifetime: its token is kept this long. */
const unnamedLifetimeMs = 60_000;
/**
 * The longest a token is waited for. Longer than a check's bound on purpose: the fetch is shared, and one that
 * finishes after a send gave up still serves the sends after it.
 */
const tokenTimeoutMs = 10_000;

/**
 * A client-credentials access token (RFC 6749 4.4) from CAMARA_TOKEN_URL, the client authenticated with HTTP Basic
 * (2.3.1), kept until shortly before its `expires_in`; concurrent callers share one fetch. Neither the secret
 * nor the token is ever part of an error.
 */
export class CamaraToken {
  private kept: { readonly value: string; readonly until: number } | null = null;
  private fetching: Promise<string> | null = null;

  constructor(
    private readonly credentials: CamaraCredentials,
    private readonly clock: Clock,
    /** The scopes the configured checks' operations name: an operator's token endpoint grants what is asked for. */
    private readonly scopes: readonly string[] = [],
  ) {}

  get(): Promise<string> {
    if (this.kept !== null && this.kept.until > this.clock.now().getTime()) return Promise.resolve(this.kept.value);
    this.fetching ??= this.fetch().finally(() => {
      this.fetching = null;
    });
    return this.fetching;
  }

  /** The API refused the token (401): the next call fetches another. */
  forget(): void {
    this.kept = null;
  }

  private async fetch(): Promise<string> {
    const grant = { grant_type: 'client_credentials', ...(this.scopes.length > 0 && { scope: this.scopes.join(' ') }) };
    const { token, expiresInSeconds } = await camaraTokenRequest(this.credentials, grant, AbortSignal.timeout(tokenTimeoutMs));
    const lifetime = expiresInSeconds !== null ? expiresInSeconds * 1000 : unnamedLifetimeMs;
    // A short-lived token is still kept for half its life, rather than fetched for every check.
    this.kept = { value: token, until: this.clock.now().getTime() + Math.max(lifetime - marginMs, lifetime / 2) };
    return token;
  }
}

/**
 * One request to CAMARA_TOKEN_URL (RFC 6749 3.2), the client authenticated with HTTP Basic (client_secret_basic,
 * 2.3.1), for the grant in `form` (client credentials, or an authorization code with its PKCE verifier): the
 * bearer access token and its lifetime, if named. Throws on anything else; neither secret nor token is ever part
 * of an error.
 */
export async function camaraTokenRequest(
  credentials: CamaraCredentials,
  form: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<{ readonly token: string; readonly expiresInSeconds: number | null }> {
  const { tokenUrl, clientId, clientSecret } = credentials;
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
  const answer = await request(tokenUrl, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': 'otp-service' },
    body: new URLSearchParams(form).toString(),
    signal,
  });
  const body = jsonObject(await readBounded(answer.body));
  if (answer.statusCode !== 200) {
    const error = typeof body?.error === 'string' && /^[\x20-\x7e]{1,64}$/.test(body.error) ? ` (${body.error})` : '';
    throw new Error(`CAMARA token endpoint answered ${answer.statusCode}${error}`);
  }
  const token = body?.access_token;
  const type = body?.token_type;
  if (typeof token !== 'string' || token === '' || typeof type !== 'string' || type.toLowerCase() !== 'bearer') {
    throw new Error('CAMARA token endpoint gave no bearer access_token');
  }
  return { token, expiresInSeconds: typeof body?.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : null };
}
