import type { AwaitingProof, OutgoingSilent, Provider, ProviderModule, SendResult } from '../../channels/provider-port.js';
import { CamaraApi } from '../../carrier/camara-api.js';
import { camaraTokenRequest, type CamaraCredentials } from '../../carrier/camara-token.js';
import type { NetworkAnswer, NetworkProof } from '../../domain/silent-proof.js';
import { parseHttpUrl, type HttpBaseUrl } from '../http-provider.js';
import { CamaraStates, pkceChallenge } from './camara-state.js';

/**
 * CAMARA Number Verification (contract 19; camaraproject/NumberVerification, release r3.2, version 2.1.0): the
 * device opens the service's check URL over its mobile data; it is sent to the operator's authorization endpoint
 * (OpenID Connect authorization code with PKCE), which knows the device's number from the network and sends it back
 * to `{PUBLIC_BASE_URL}/silent/camara/callback`; the service trades the code for the device's token and asks
 * `POST {CAMARA_BASE_URL}/number-verification/v2/verify` whether the device's number is the verification's.
 * CAMARA_BASE_URL, CAMARA_TOKEN_URL, CAMARA_CLIENT_ID and CAMARA_CLIENT_SECRET are the service's CAMARA settings,
 * shared with the carrier checks; the authorization endpoint is this provider's own.
 */

/** The scopes asked for: OpenID Connect, and Number Verification's verify operation for fraud prevention. */
export const numberVerificationScope = 'openid dpv:FraudPreventionAndDetection#number-verification-verify-read';

/** The verify operation, under the description's base path. */
export const verifyPath = '/number-verification/v2/verify';

/** Where the operator sends the device back. */
export function camaraRedirectUri(publicBaseUrl: string): string {
  return `${publicBaseUrl}/silent/camara/callback`;
}

const camaraSettings = {
  CAMARA_AUTHORIZE_URL: {
    doc: "SILENT_PROVIDER=camara: the operator's OpenID Connect authorization endpoint the device is sent to over its mobile data (with CAMARA_BASE_URL, CAMARA_TOKEN_URL, CAMARA_CLIENT_ID, CAMARA_CLIENT_SECRET and PUBLIC_BASE_URL)",
    default: undefined,
    required: true as const,
    parse: (raw: string): URL => parseHttpUrl(raw, 'https://operator.example/authorize'),
  },
};

export interface CamaraNumberVerificationSettings {
  readonly authorizeUrl: URL;
  readonly base: HttpBaseUrl;
  readonly credentials: CamaraCredentials;
  readonly publicBaseUrl: string;
  /** The bound of each call to the operator (PROVIDER_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** The signing secret every instance shares: the states' and verifiers' key is made from it. */
  readonly secret: Buffer;
  /** Fresh random text for each state's nonce. */
  readonly nonce: () => string;
}

/** The network's proof of a device's number through CAMARA Number Verification. */
export class CamaraNumberVerification implements NetworkProof {
  private readonly states: CamaraStates;
  private readonly api: CamaraApi;

  constructor(private readonly settings: CamaraNumberVerificationSettings) {
    this.states = new CamaraStates(settings.secret);
    this.api = new CamaraApi(settings.base, null);
  }

  begin(verificationId: string): string {
    const state = this.states.issue(verificationId, this.settings.nonce());
    const url = new URL(this.settings.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.settings.credentials.clientId);
    url.searchParams.set('redirect_uri', camaraRedirectUri(this.settings.publicBaseUrl));
    url.searchParams.set('scope', numberVerificationScope);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', pkceChallenge(this.states.verifier(state)));
    url.searchParams.set('code_challenge_method', 'S256');
    return url.toString();
  }

  opened(state: string): string | null {
    return this.states.open(state);
  }

  async check(state: string, code: string, phoneNumber: string): Promise<NetworkAnswer> {
    const signal = AbortSignal.timeout(this.settings.timeoutMs);
    let token: string;
    try {
      const grant = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: camaraRedirectUri(this.settings.publicBaseUrl),
        code_verifier: this.states.verifier(state),
      };
      ({ token } = await camaraTokenRequest(this.settings.credentials, grant, signal));
    } catch (err) {
      return { kind: 'failed', reason: `the operator's token endpoint: ${describe(err, signal)}` };
    }
    try {
      const answer = await this.api.postWith(token, verifyPath, { phoneNumber }, signal);
      const verified = answer.devicePhoneNumberVerified;
      if (typeof verified !== 'boolean') return { kind: 'failed', reason: 'Number Verification answered without devicePhoneNumberVerified' };
      return verified ? { kind: 'verified' } : { kind: 'not-verified' };
    } catch (err) {
      return { kind: 'failed', reason: `Number Verification: ${describe(err, signal)}` };
    }
  }
}

function describe(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'no answer within PROVIDER_TIMEOUT_MS';
  return err instanceof Error ? err.message : 'unknown error';
}

/** The camara provider: a silent step sends nothing; the device goes to its check URL. */
export class CamaraSilentProvider implements Provider {
  readonly name = 'camara';
  readonly channels = ['silent'] as const;

  constructor(readonly authorizeUrl: URL) {}

  start = async (): Promise<void> => undefined;
  stop = async (): Promise<void> => undefined;

  send(): Promise<SendResult> {
    return Promise.resolve({ kind: 'permanent', reason: 'camara sends nothing: the device opens its check URL' });
  }

  awaitProof(message: OutgoingSilent): AwaitingProof {
    return { kind: 'awaiting', until: message.deadline };
  }
}

export const camaraNumberVerification: ProviderModule<typeof camaraSettings> = {
  name: 'camara',
  channels: ['silent'],
  settings: camaraSettings,
  callbacks: false,
  create(values) {
    return new CamaraSilentProvider(values.CAMARA_AUTHORIZE_URL);
  },
};
