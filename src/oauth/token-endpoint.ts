import type { Scope } from '../domain/scopes.js';
import { parseScopeList } from '../domain/scopes.js';
import { secretMatches, type Client } from './client.js';
import type { ClientDirectory } from './client-directory.js';
import type { IssuedToken, TokenService } from './token-service.js';

export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope' | 'slow_down';

/** An RFC 6749 §5.2 error: a public description for the client, a private detail for the logs. */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status: number,
    readonly detail?: string,
    /** Set when the client authenticated with HTTP Basic: the 401 then carries WWW-Authenticate: Basic. */
    readonly basic = false,
    readonly retryAfterSeconds?: number,
  ) {
    super(description);
  }
}

/** The parameters of a token request, each with every value it was given (to find repeats). */
export type TokenParams = Readonly<Record<string, readonly string[]>>;

/** Credentials from an `Authorization: Basic` header; `malformed` when the header could not be decoded. */
export type BasicCredentials = { readonly id: string; readonly secret: string } | 'malformed' | null;

export interface TokenRequest {
  readonly params: TokenParams;
  readonly basic: BasicCredentials;
  /** Where the request came from, for slowing down guessing. */
  readonly address: string;
}

/** Counts failed client authentications per address (port; the shared WindowCounter). */
export interface FailureCounter {
  count(key: string): number;
  hit(key: string): void;
  msToNextWindow(): number;
}

/**
 * Seconds until `key` may try again when it failed `max` times in the current window, or null while it may try:
 * the one rule that slows guessing at the token endpoint and at the console's sign-in (contract 6 and 16).
 */
export function retryAfterRepeatedFailures(failures: FailureCounter, key: string, max: number): number | null {
  if (failures.count(key) < max) return null;
  return Math.max(1, Math.ceil(failures.msToNextWindow() / 1000));
}

/**
 * The client-credentials grant, as a short list of named steps: parse, authenticate the client, reject
 * repeats, check the grant, check the scope, issue.
 */
export class TokenEndpoint {
  constructor(
    private readonly clients: ClientDirectory,
    private readonly tokens: TokenService,
    private readonly failures: FailureCounter,
    private readonly maxFailures: number,
  ) {}

  async handle(request: TokenRequest): Promise<IssuedToken> {
    rejectDuplicates(request.params);
    const client = await this.authenticateClient(request);
    checkGrant(request.params);
    const scopes = checkScope(request.params, client);
    return this.tokens.issue(client.id, scopes);
  }

  /**
   * Repeated failures for one client id from one address are slowed down. Keyed on both, so that a caller behind
   * a shared address (a proxy, a NAT) cannot lock the other clients out, and rotating the address (only possible
   * through proxies the operator trusts, see TRUST_PROXY) is needed to escape it.
   */
  private refuseRepeatedGuessing(key: string, address: string): void {
    const retry = retryAfterRepeatedFailures(this.failures, key, this.maxFailures);
    if (retry !== null) throw new OAuthError('slow_down', 'Too many failed client authentications; retry later', 429, address, false, retry);
  }

  private async authenticateClient(request: TokenRequest): Promise<Client> {
    const formId = single(request.params, 'client_id');
    const formSecret = single(request.params, 'client_secret');
    const basic = request.basic;
    if (basic === 'malformed') {
      throw new OAuthError('invalid_request', 'The Authorization header is malformed', 400);
    }
    if (basic && (formId !== undefined || formSecret !== undefined)) {
      throw new OAuthError('invalid_request', 'Use one client authentication method, not two', 400);
    }
    const id = basic ? basic.id : formId;
    const secret = basic ? basic.secret : formSecret;
    if (!id || !secret) {
      throw new OAuthError('invalid_request', 'client_id and client_secret are required', 400);
    }
    const failureKey = `auth:${id}|${request.address}`;
    this.refuseRepeatedGuessing(failureKey, request.address);
    const client = await this.clients.get(id);
    // The secret is checked even for an unknown client, so the answer takes as long either way.
    const matches = secretMatches(secret, client?.secretHash ?? unknownClientHash);
    if (!client || !matches || client.disabledAt) {
      this.failures.hit(failureKey);
      const why = !client ? 'unknown client' : !matches ? 'wrong secret' : 'disabled client';
      throw new OAuthError('invalid_client', 'Client authentication failed', 401, why, basic !== null);
    }
    return client;
  }
}

const unknownClientHash = '0'.repeat(64);

const singleValued = ['grant_type', 'scope', 'client_id', 'client_secret'];

function rejectDuplicates(params: TokenParams): void {
  const repeated = singleValued.filter((name) => (params[name]?.length ?? 0) > 1);
  if (repeated.length > 0) {
    throw new OAuthError('invalid_request', `Parameter given more than once: ${repeated.join(', ')}`, 400);
  }
}

function checkGrant(params: TokenParams): void {
  const grant = single(params, 'grant_type');
  if (!grant) throw new OAuthError('invalid_request', 'grant_type is required', 400);
  if (grant !== 'client_credentials') {
    throw new OAuthError('unsupported_grant_type', 'Only the client_credentials grant is supported', 400);
  }
}

function checkScope(params: TokenParams, client: Client): readonly Scope[] {
  const raw = single(params, 'scope');
  if (raw === undefined) return client.scopes;
  const { scopes, unknown } = parseScopeList(raw);
  const refused = [...unknown, ...scopes.filter((s) => !client.scopes.includes(s))];
  if (refused.length > 0) {
    throw new OAuthError('invalid_scope', `Scope not allowed for this client: ${refused.join(' ')}`, 400);
  }
  if (scopes.length === 0) throw new OAuthError('invalid_scope', 'scope is empty', 400);
  return scopes;
}

function single(params: TokenParams, name: string): string | undefined {
  return params[name]?.[0];
}

/** Decodes `Authorization: Basic` per RFC 6749 §2.3.1 (id and secret form-url-decoded after base64). */
export function parseBasic(header: string | undefined): BasicCredentials {
  if (!header || !/^basic /i.test(header)) return null;
  const encoded = header.slice(6).trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return 'malformed';
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return 'malformed';
  }
}
