import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import type { AwaitingProof, OutgoingSilent, Provider, ProviderContext, ProviderModule, SendResult } from '../../channels/provider-port.js';
import type { Clock } from '../../domain/ports.js';
import type { NumberProofChecker, ProofCheck } from '../../domain/silent-proof.js';
import { parseHttpUrl } from '../http-provider.js';

/**
 * Firebase Phone Number Verification (contract 19; firebase.google.com/docs/phone-number-verification/verify-tokens):
 * the app gets a token for its number from Firebase on the device and its backend posts it to
 * POST /v1/otp/{id}/silent. Nothing is sent to anyone for the step. A token is an ES256 JWT signed by a key of
 * Google's key set, issued by `https://fpnv.googleapis.com/projects/{number}`, for an audience that holds it,
 * unexpired, whose `sub` is the number.
 */

/** Google's published key set of Firebase PNV tokens. */
export const googlePnvJwksUrl = 'https://fpnv.googleapis.com/v1beta/jwks';

const firebaseSettings = {
  FIREBASE_PROJECT_NUMBER: {
    doc: 'SILENT_PROVIDER=firebase: the Firebase project number (Settings > General in the Firebase console) whose PNV tokens are accepted: their issuer and audience',
    default: undefined,
    required: true as const,
    parse: (raw: string): string => {
      if (!/^\d{1,20}$/.test(raw.trim())) throw new Error('must be the Firebase project number (digits), not its id');
      return raw.trim();
    },
  },
  FIREBASE_PNV_JWKS_URL: {
    doc: "SILENT_PROVIDER=firebase: the key set PNV tokens are signed with, fetched when a token names a key not held yet and kept for 10 minutes; each fetch bounded by PROVIDER_TIMEOUT_MS",
    default: googlePnvJwksUrl,
    required: false,
    parse: (raw: string): URL => parseHttpUrl(raw, googlePnvJwksUrl),
  },
  FIREBASE_PNV_JWKS_COOLDOWN_SECONDS: {
    doc: 'SILENT_PROVIDER=firebase: after a fetch of the key set, how long a token naming a key not in it is refused without fetching the set again (so that forged key ids cannot make the service fetch it on every request)',
    default: '30',
    required: false,
    parse: (raw: string): number => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw.trim()) || n > 3600) throw new Error('must be a whole number of seconds from 0 to 3600');
      return n;
    },
  },
};

/** Google's issuer (and audience entry) of a project's tokens. */
export function pnvIssuer(projectNumber: string): string {
  return `https://fpnv.googleapis.com/projects/${projectNumber}`;
}

/** Checks Firebase PNV tokens against the project and Google's key set, cached and fetched again for a new key. */
export class FirebaseTokenChecker implements NumberProofChecker {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;
  private readonly issuer: string;
  private readonly clock: Clock | undefined;

  constructor(
    projectNumber: string,
    jwksUrl: URL,
    options: { readonly timeoutMs: number; readonly cooldownSeconds: number; readonly clock?: Clock },
  ) {
    this.issuer = pnvIssuer(projectNumber);
    this.keys = createRemoteJWKSet(jwksUrl, { timeoutDuration: options.timeoutMs, cooldownDuration: options.cooldownSeconds * 1000 });
    this.clock = options.clock;
  }

  async check(token: string, phoneNumber: string): Promise<ProofCheck> {
    try {
      const { payload } = await jwtVerify(token, this.keys, {
        algorithms: ['ES256'],
        issuer: this.issuer,
        audience: this.issuer,
        typ: 'JWT',
        requiredClaims: ['exp', 'sub'],
        ...(this.clock && { currentDate: this.clock.now() }),
      });
      if (payload.sub !== phoneNumber) return { kind: 'not-proved', reason: 'the token is for another number' };
      return { kind: 'proved' };
    } catch (err) {
      return unavailable(err) ? { kind: 'unavailable', reason: `the key set (FIREBASE_PNV_JWKS_URL) could not be read: ${describe(err)}` } : { kind: 'not-proved', reason: describe(err) };
    }
  }
}

/** Whether a failure is the key set's (not read, not in time), not the token's. */
function unavailable(err: unknown): boolean {
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid) return true;
  // A key set answered with another status than 200, or not JSON: jose's generic error; a network failure: not jose's.
  if (err instanceof joseErrors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true;
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JOSEError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : 'unknown error';
}

/** The firebase provider: a silent step sends nothing; its tokens are checked by its checker. */
export class FirebasePnvProvider implements Provider {
  readonly name = 'firebase';
  readonly channels = ['silent'] as const;

  constructor(readonly proofs: FirebaseTokenChecker) {}

  start = async (): Promise<void> => undefined;
  stop = async (): Promise<void> => undefined;

  send(): Promise<SendResult> {
    return Promise.resolve({ kind: 'permanent', reason: 'firebase sends nothing: the device gets its token itself' });
  }

  awaitProof(message: OutgoingSilent): AwaitingProof {
    return { kind: 'awaiting', until: message.deadline };
  }
}

export const firebasePnv: ProviderModule<typeof firebaseSettings> = {
  name: 'firebase',
  channels: ['silent'],
  settings: firebaseSettings,
  callbacks: false,
  create(values, context: ProviderContext) {
    return new FirebasePnvProvider(
      new FirebaseTokenChecker(values.FIREBASE_PROJECT_NUMBER, values.FIREBASE_PNV_JWKS_URL, {
        timeoutMs: context.providerTimeoutMs ?? 10_000,
        cooldownSeconds: values.FIREBASE_PNV_JWKS_COOLDOWN_SECONDS,
        ...(context.clock && { clock: context.clock }),
      }),
    );
  },
};
