import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The `state` of a CAMARA Number Verification authorization request, bound to its verification and unguessable:
 * the verification id and a fresh random nonce, with an HMAC under a key of the service's own (derived from the
 * signing key every instance shares), so that any instance reads it back and a forged one is known. The PKCE
 * code_verifier (RFC 7636) is derived from the state under the same key: it never leaves the service, only its
 * S256 challenge goes to the operator. A state is single use because its callback ends the silent step either way.
 */
export class CamaraStates {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'otp-service', 'silent camara state', 32));
  }

  /** A state for `verificationId`; `nonce`: fresh random text (a UUID). */
  issue(verificationId: string, nonce: string): string {
    const payload = Buffer.from(`${verificationId}.${nonce}`).toString('base64url');
    return `${payload}.${this.mac(`state|${payload}`)}`;
  }

  /** The verification a state names, or null when it is not one of ours. */
  open(state: string): string | null {
    const match = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/.exec(state);
    if (!match?.[1] || !match[2]) return null;
    const expected = Buffer.from(this.mac(`state|${match[1]}`));
    if (!timingSafeEqual(Buffer.from(match[2]), expected)) return null;
    const [id] = Buffer.from(match[1], 'base64url').toString('utf8').split('.');
    return id && /^[0-9a-f-]{36}$/.test(id) ? id : null;
  }

  /** The PKCE code_verifier of a state (43 characters of base64url). */
  verifier(state: string): string {
    return this.mac(`pkce|${state}`);
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }
}

/** The S256 code_challenge of a verifier (RFC 7636 4.2). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
