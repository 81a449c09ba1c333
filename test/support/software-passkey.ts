import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';

/**
 * A passkey made in software, as an authenticator makes one for `navigator.credentials.create()`: an ES256 key
 * pair and a credential id, and a registration response with `none` attestation (WebAuthn Level 2, 6.1 and 8.7)
 * for the options a relying party gave. It answers what a browser would post, without a browser, so a test can
 * post the same passkey twice, which a browser's `excludeCredentials` never lets through.
 */
export function softwarePasskey(): { readonly id: string; register(options: { challenge: string; rp: { id?: string } }, origin: string): object } {
  const credentialId = randomBytes(16);
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  // COSE_Key of an EC2 P-256 key for ES256 (RFC 9053 7.1): kty 2, alg -7, crv 1, x, y.
  const coseKey = cborMap([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Buffer.from(jwk.x ?? '', 'base64url')],
    [-3, Buffer.from(jwk.y ?? '', 'base64url')],
  ]);
  const b64url = (b: Buffer) => b.toString('base64url');
  return {
    id: b64url(credentialId),
    register(options, origin) {
      const rpId = options.rp.id ?? new URL(origin).hostname;
      const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false }));
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(credentialId.length);
      // Flags: user present (0x01), user verified (0x04), attested credential data (0x40); the counter starts at 0.
      const authData = Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([0x45]), Buffer.alloc(4), Buffer.alloc(16), idLength, credentialId, coseKey]);
      const attestationObject = cborMap([
        ['fmt', 'none'],
        ['attStmt', new Map<never, never>()],
        ['authData', authData],
      ]);
      return {
        id: b64url(credentialId),
        rawId: b64url(credentialId),
        type: 'public-key',
        response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
        clientExtensionResults: {},
      };
    },
  };
}

type CborValue = number | string | Buffer | ReadonlyMap<never, never>;

/** CBOR (RFC 8949) of a map, for the few types attestation needs: integers, text, bytes and an empty map. */
function cborMap(entries: readonly (readonly [number | string, CborValue])[]): Buffer {
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

function cbor(value: CborValue): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  return head(5, 0);
}

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  const b = Buffer.alloc(3);
  b[0] = (major << 5) | 25;
  b.writeUInt16BE(n, 1);
  return b;
}
