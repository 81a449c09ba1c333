import { createHash, randomBytes } from 'node:crypto';
import { splitList } from './message.js';

/**
 * HTTP digest authentication as SIP uses it (RFC 3261 section 22.4, RFC 2617, RFC 7616 and RFC 8760 for SHA-256):
 * read a trunk's WWW-Authenticate / Proxy-Authenticate challenge and answer it for one request. qop=auth is used
 * when offered; auth-int (a digest of the body) is not, nor are other schemes.
 */

type Hash = 'MD5' | 'SHA-256';

/** One digest challenge, as the trunk gave it. */
export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly opaque: string | null;
  readonly algorithm: Hash;
  /** The -sess variant: HA1 also covers the nonce and cnonce. */
  readonly session: boolean;
  /** Whether qop=auth was offered; false: RFC 2069 style without qop. */
  readonly qopAuth: boolean;
}

/** Parses the parameters of one `Digest k=v, k="v"` challenge; null for another scheme or an unusable one. */
export function parseChallenge(value: string): DigestChallenge | null {
  const m = /^\s*Digest\s+(.*)$/is.exec(value);
  if (!m?.[1]) return null;
  const params = new Map<string, string>();
  for (const part of splitList(m[1])) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const raw = part.slice(eq + 1).trim();
    const unquoted = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
    params.set(part.slice(0, eq).trim().toLowerCase(), unquoted);
  }
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  if (realm === undefined || !nonce) return null;
  const algorithm = (params.get('algorithm') ?? 'MD5').toUpperCase();
  const hash: Hash | null = algorithm.startsWith('SHA-256') ? 'SHA-256' : algorithm.startsWith('MD5') ? 'MD5' : null;
  if (hash === null || !/^(MD5|SHA-256)(-SESS)?$/.test(algorithm)) return null;
  const qop = params.get('qop');
  const qopAuth = qop !== undefined && qop.split(',').some((q) => q.trim().toLowerCase() === 'auth');
  // A challenge that offers only auth-int cannot be answered without hashing the body, which this UAC does not do.
  if (qop !== undefined && !qopAuth) return null;
  return { realm, nonce, opaque: params.get('opaque') ?? null, algorithm: hash, session: algorithm.endsWith('-SESS'), qopAuth };
}

/** The challenge to answer among a response's: SHA-256 over MD5 when both are offered (RFC 8760 section 2.4). */
export function pickChallenge(values: readonly string[]): DigestChallenge | null {
  const usable = values.map(parseChallenge).filter((c): c is DigestChallenge => c !== null);
  return usable.find((c) => c.algorithm === 'SHA-256') ?? usable[0] ?? null;
}

export interface DigestCredentials {
  readonly username: string;
  readonly password: string;
}

/** The Authorization / Proxy-Authorization value answering `challenge` for `method` on `uri`. */
export function answerChallenge(
  challenge: DigestChallenge,
  credentials: DigestCredentials,
  method: string,
  uri: string,
  cnonce: string = randomBytes(12).toString('hex'),
): string {
  const h = (text: string) => createHash(challenge.algorithm === 'SHA-256' ? 'sha256' : 'md5').update(text, 'utf8').digest('hex');
  const nc = '00000001';
  const base = h(`${credentials.username}:${challenge.realm}:${credentials.password}`);
  const ha1 = challenge.session ? h(`${base}:${challenge.nonce}:${cnonce}`) : base;
  const ha2 = h(`${method}:${uri}`);
  const response = challenge.qopAuth ? h(`${ha1}:${challenge.nonce}:${nc}:${cnonce}:auth:${ha2}`) : h(`${ha1}:${challenge.nonce}:${ha2}`);
  const algorithm = `${challenge.algorithm}${challenge.session ? '-sess' : ''}`;
  const parts = [
    `username="${quote(credentials.username)}"`,
    `realm="${quote(challenge.realm)}"`,
    `nonce="${quote(challenge.nonce)}"`,
    `uri="${quote(uri)}"`,
    `response="${response}"`,
    `algorithm=${algorithm}`,
  ];
  if (challenge.opaque !== null) parts.push(`opaque="${quote(challenge.opaque)}"`);
  if (challenge.qopAuth) parts.push('qop=auth', `nc=${nc}`, `cnonce="${cnonce}"`);
  return `Digest ${parts.join(', ')}`;
}

function quote(value: string): string {
  return value.replace(/(["\\])/g, '\\$1');
}
