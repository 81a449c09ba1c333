import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Clock } from '../domain/ports.js';
import type { OperatorRecord } from './operator-service.js';

/** A stored passkey (WebAuthn credential). */
export interface StoredPasskey {
  readonly credentialId: string;
  readonly operatorId: string;
  /** The COSE public key, base64url. */
  readonly publicKey: string;
  readonly counter: number;
  readonly transports: readonly string[];
}

/** A passkey as its operator sees it in the console (never its public key). */
export interface PasskeyView {
  readonly id: string;
  readonly createdAt: string;
  readonly transports: readonly string[];
}

/** Where passkeys and their pending challenges are kept (port; src/store/passkey-store.ts). */
export interface PasskeyStore {
  /** Stores a new passkey; false when one with its credential id is already registered (to anyone). */
  add(passkey: StoredPasskey, now: Date): Promise<boolean>;
  ofOperator(operatorId: string): Promise<StoredPasskey[]>;
  find(credentialId: string): Promise<StoredPasskey | null>;
  setCounter(credentialId: string, counter: number): Promise<void>;
  /** An operator's passkeys as they see them: which, since when, and how the authenticator is reached. */
  listed(operatorId: string): Promise<PasskeyView[]>;
  /** Removes one of the operator's passkeys; false when they have none by that id. */
  remove(credentialId: string, operatorId: string): Promise<boolean>;
  /** Stores a challenge until `expiresAt`, and forgets every challenge expired at `now`. */
  putChallenge(challenge: string, operatorId: string | null, purpose: ChallengePurpose, expiresAt: Date, now: Date): Promise<void>;
  /** Deletes a challenge that is unexpired at `now` and returns its operator (null: any); undefined when there is none. */
  takeChallenge(challenge: string, purpose: ChallengePurpose, now: Date): Promise<{ operatorId: string | null } | undefined>;
}

export type ChallengePurpose = 'register' | 'sign-in';

/** The relying party: the console's origin and its host name (the rpID passkeys are bound to). */
export interface RelyingParty {
  readonly origin: string;
  readonly id: string;
}

export function relyingPartyOf(origin: string): RelyingParty {
  return { origin, id: new URL(origin).hostname };
}

/** A challenge is answered within 5 minutes or not at all. */
const challengeMs = 5 * 60_000;

/**
 * Passkeys for the console (WebAuthn through @simplewebauthn/server): an operator who signed in adds one; anyone
 * signs in with one (a discoverable credential: the browser offers the operator's passkeys for this site). Every
 * challenge is stored and taken once, so any instance can check the answer and none can be replayed.
 */
export class Passkeys {
  constructor(
    private readonly store: PasskeyStore,
    private readonly clock: Clock,
  ) {}

  private async putChallenge(challenge: string, operatorId: string | null, purpose: ChallengePurpose): Promise<void> {
    const now = this.clock.now();
    await this.store.putChallenge(challenge, operatorId, purpose, new Date(now.getTime() + challengeMs), now);
  }

  /** The operator's own passkeys. */
  ofOperator(operator: OperatorRecord): Promise<PasskeyView[]> {
    return this.store.listed(operator.id);
  }

  /** Removes one of the operator's own passkeys (another's is "none"): it signs nobody in afterwards. */
  remove(operator: OperatorRecord, credentialId: string): Promise<boolean> {
    return this.store.remove(credentialId, operator.id);
  }

  async registrationOptions(operator: OperatorRecord, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await this.store.ofOperator(operator.id);
    const options = await generateRegistrationOptions({
      rpName: 'otp-service console',
      rpID: rp.id,
      userName: operator.email,
      userID: new TextEncoder().encode(operator.id),
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: [...p.transports] })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    await this.putChallenge(options.challenge, operator.id, 'register');
    return options;
  }

  /**
   * Checks a new passkey's registration and stores it; 'exists' when that passkey is already registered, an error
   * text when it is refused.
   */
  async register(operator: OperatorRecord, response: RegistrationResponseJSON, rp: RelyingParty): Promise<true | 'exists' | string> {
    const now = this.clock.now();
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: async (c) => (await this.store.takeChallenge(c, 'register', now))?.operatorId === operator.id,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: false,
      });
    } catch (err) {
      return `the passkey was not accepted: ${(err as Error).message}`;
    }
    if (!verified.verified) return 'the passkey was not accepted';
    const { credential } = verified.registrationInfo;
    const added = await this.store.add(
      {
        credentialId: credential.id,
        operatorId: operator.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: credential.transports ?? [],
      },
      now,
    );
    return added ? true : 'exists';
  }

  async signInOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'preferred' });
    await this.putChallenge(options.challenge, null, 'sign-in');
    return options;
  }

  /** The operator a passkey answer proves, or null. */
  async signIn(response: AuthenticationResponseJSON, rp: RelyingParty): Promise<string | null> {
    const passkey = typeof response?.id === 'string' ? await this.store.find(response.id) : null;
    if (!passkey) return null;
    const now = this.clock.now();
    try {
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: async (c) => (await this.store.takeChallenge(c, 'sign-in', now)) !== undefined,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: {
          id: passkey.credentialId,
          publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
          counter: passkey.counter,
          transports: [...passkey.transports],
        },
        requireUserVerification: false,
      });
      if (!verified.verified) return null;
      await this.store.setCounter(passkey.credentialId, verified.authenticationInfo.newCounter);
      return passkey.operatorId;
    } catch {
      return null;
    }
  }
}
