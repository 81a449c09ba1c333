import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { jwtVerify, errors as joseErrors } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Clock, Random } from '../domain/ports.js';
import { isScope, type Scope } from '../domain/scopes.js';
import type { ClientDirectory } from './client-directory.js';

/** What a valid access token proves. */
export interface AccessGrant {
  readonly clientId: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt: Date;
}

export interface IssuedToken {
  readonly accessToken: string;
  readonly expiresAt: Date;
  readonly expiresIn: number;
  readonly scopes: readonly Scope[];
}

/** The key access tokens are signed with, shared by every instance through the database (port). */
export interface SigningKeyStore {
  /** The current key, created from `createSecret` on first use. */
  currentKey(createSecret: () => Buffer): Promise<{ id: string; secret: Buffer }>;
}

const tokenType = 'at+jwt';

/** Bound on the tokens kept for reuse within one second (see `TokenService.issue`). */
const maxMintedPerSecond = 10_000;

/**
 * Issues and checks access tokens: HS256 JWTs signed with a key kept in the database, so any instance can
 * check any token without a database read. Checked tokens are cached (bounded) to spare the HMAC, and the
 * client's standing comes from the ClientDirectory, so a disabled client's tokens stop working within 60 s.
 */
export class TokenService {
  private readonly verified = new LRUCache<string, AccessGrant>({ max: 50_000 });
  /** The encoded JWS header, the same on every token. */
  private readonly encodedHeader: string;
  /** The signing key as a KeyObject, so that signing does not import the raw key again for every token. */
  private readonly signingKey: KeyObject;
  /** Tokens signed in the current second, by client and scope (see `issue`). */
  private minted: { iat: number; tokens: Map<string, string> } = { iat: -1, tokens: new Map() };

  private constructor(
    keyId: string,
    private readonly key: Uint8Array,
    private readonly ttlSeconds: number,
    private readonly clients: ClientDirectory,
    private readonly clock: Clock,
  ) {
    this.encodedHeader = base64url(JSON.stringify({ alg: 'HS256', typ: tokenType, kid: keyId }));
    this.signingKey = createSecretKey(key);
  }

  static async create(
    keys: SigningKeyStore,
    ttlSeconds: number,
    clients: ClientDirectory,
    clock: Clock,
    random: Random,
  ): Promise<TokenService> {
    const key = await keys.currentKey(() => random.bytes(32));
    return new TokenService(key.id, new Uint8Array(key.secret), ttlSeconds, clients, clock);
  }

  async issue(clientId: string, scopes: readonly Scope[]): Promise<IssuedToken> {
    const now = this.clock.now();
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + this.ttlSeconds;
    const scope = scopes.join(' ');
    // A token is a pure function of the key and its claims, and within one second a client asking for the same
    // scopes gets the same claims: the token signed for the first request of the second is the very string
    // signing again would make, so it is handed out again (every check of the request has run before this).
    // Only this second's tokens are kept, at most `maxMintedPerSecond` of them.
    if (this.minted.iat !== iat) this.minted = { iat, tokens: new Map() };
    // Length-prefixed, so that no client id and scope pair reads as another.
    const mintedKey = `${clientId.length}:${clientId}${scope}`;
    let accessToken = this.minted.tokens.get(mintedKey);
    if (accessToken === undefined) {
      accessToken = this.sign({ scope, sub: clientId, iat, exp });
      if (this.minted.tokens.size < maxMintedPerSecond) this.minted.tokens.set(mintedKey, accessToken);
    }
    return { accessToken, expiresAt: new Date(exp * 1000), expiresIn: exp - iat, scopes };
  }

  /**
   * A compact HS256 JWS. Signed here with node:crypto's HMAC, synchronously: jose's WebCrypto signing cost
   * more than the rest of the token endpoint together (measured in bench/). Tokens are still checked by jose.
   */
  private sign(claims: { scope: string; sub: string; iat: number; exp: number }): string {
    const signingInput = `${this.encodedHeader}.${base64url(JSON.stringify(claims))}`;
    return `${signingInput}.${createHmac('sha256', this.signingKey).update(signingInput).digest('base64url')}`;
  }

  /**
   * The grant a bearer token carries, or null when it is malformed, expired, forged or its client is off. The grant
   * holds only the scopes its client has, and ends TOKEN_TTL_SECONDS after the token was issued at the latest.
   */
  async authenticate(token: string): Promise<AccessGrant | null> {
    const now = this.clock.now();
    let grant = this.verified.get(token);
    if (!grant) {
      const decoded = await this.decode(token, now);
      if (!decoded) return null;
      grant = decoded;
      this.verified.set(token, grant);
    }
    if (grant.expiresAt.getTime() <= now.getTime()) {
      this.verified.delete(token);
      return null;
    }
    const client = await this.clients.get(grant.clientId);
    if (!client || client.disabledAt) return null;
    // A token is worth what its client may do, whatever it claims: one made with a stolen signing key claims
    // any scope, and this service never issues a scope its client lacks.
    const scopes = grant.scopes.filter((s) => client.scopes.includes(s));
    return scopes.length === grant.scopes.length ? grant : { ...grant, scopes };
  }

  private async decode(token: string, now: Date): Promise<AccessGrant | null> {
    if (token.length > 4096) return null;
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        typ: tokenType,
        currentDate: now,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      const scope = typeof payload.scope === 'string' ? payload.scope : '';
      if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number' || typeof payload.iat !== 'number') return null;
      // Never past TOKEN_TTL_SECONDS from its issue, whatever expiry it claims (a forged ten-year token included).
      const expiresAt = new Date(Math.min(payload.exp, payload.iat + this.ttlSeconds) * 1000);
      return { clientId: payload.sub, scopes: scope.split(' ').filter(isScope), expiresAt };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return null;
      throw err;
    }
  }
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
