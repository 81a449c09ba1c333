import type {
  Outgoing,
  Provider,
  ProviderContext,
  ProviderModule,
  ProviderSettings,
  SendResult,
  ServiceCheck,
  ServiceSend,
  SettingValues,
} from '../channels/provider-port.js';
import { e164Digits, HttpApi, jsonObject, nonEmptyString, parseBaseUrl, transient, type HttpAnswer } from './http-provider.js';
import { vonageSmsSettings } from './vonage-sms.js';

const settings = {
  VONAGE_API_KEY: vonageSmsSettings.VONAGE_API_KEY,
  VONAGE_API_SECRET: {
    ...vonageSmsSettings.VONAGE_API_SECRET,
    doc: 'Vonage API secret: the password of HTTP Basic authentication (with vonage-verify it is required: Verify v2 takes no signed requests).',
    required: true as const,
  },
  VONAGE_VERIFY_BRAND: {
    doc: 'The name Vonage Verify says the code is from ("Your ACME code is ..."), at most 16 characters. Required with vonage-verify in a provider list.',
    default: undefined,
    required: true as const,
    parse: (raw: string): string => {
      const brand = raw.trim();
      if (brand.length < 1 || brand.length > 16) throw new Error('must be 1 to 16 characters');
      return brand;
    },
  },
  VONAGE_VERIFY_BASE_URL: {
    doc: "Vonage's Verify API (v2, under /v2/verify); set it to a proxy or a local stand-in.",
    default: 'https://api.nexmo.com',
    required: false,
    parse: parseBaseUrl('https://api.nexmo.com'),
  },
} satisfies ProviderSettings;

export type VonageVerifySettings = SettingValues<typeof settings>;

/**
 * vonage-verify (contract 19): Vonage Verify v2 as an SMS provider. Vonage makes the code, sends it and checks
 * it; nothing of our code goes to it. It sends no delivery callbacks here.
 */
export const vonageVerify: ProviderModule<typeof settings> = {
  name: 'vonage-verify',
  channels: ['sms'],
  settings,
  callbacks: false,
  create: (values, context) => new VonageVerifyProvider(values, context),
};

export class VonageVerifyProvider implements Provider {
  readonly name = 'vonage-verify';
  readonly channels = ['sms'] as const;
  /** The API key its requests belong to. */
  readonly account: string;
  private readonly api: HttpApi;
  private readonly authorization: string;
  /** `<prefix>/v2/verify`. */
  private readonly verifyPath: string;

  constructor(
    private readonly values: VonageVerifySettings,
    private readonly context: ProviderContext,
  ) {
    this.account = values.VONAGE_API_KEY;
    const base = values.VONAGE_VERIFY_BASE_URL;
    this.api = new HttpApi(base.origin, 'Vonage Verify');
    this.verifyPath = `${base.pathPrefix}/v2/verify`;
    this.authorization = `Basic ${Buffer.from(`${values.VONAGE_API_KEY}:${values.VONAGE_API_SECRET}`).toString('base64')}`;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  /**
   * POST /v2/verify with the brand and one SMS step, never a code of ours: Vonage makes its own. A resend is a new
   * request (the Verify v2 description has no way to send the same request's code again); its request_id is the
   * send's id from then on.
   */
  send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return Promise.resolve({ kind: 'permanent', reason: 'vonage-verify sends SMS codes only' });
    // A relayed code or a caller's own text is not ours to replace with the service's: the next provider sends it.
    if (message.codeIsGiven === true) return Promise.resolve({ kind: 'permanent', reason: 'vonage-verify sends its own code: a given code or text goes through another provider' });
    const body = JSON.stringify({ brand: this.values.VONAGE_VERIFY_BRAND, workflow: [{ channel: 'sms', to: e164Digits(message.to) }] });
    return this.api.post(this.request(this.verifyPath, body), signal, (answer) => this.decideSend(answer));
  }

  /** POST /v2/verify/{request_id} with the code: 200 right, 400 wrong, 404 and 410 gone (wrong). */
  checkCode(send: ServiceSend, code: string, signal: AbortSignal): Promise<ServiceCheck> {
    // A resend's new request is on its way: the one before it is no longer the code the user was sent last.
    if (send.messageId === null) return Promise.resolve({ kind: 'unavailable', reason: 'Vonage Verify: a new request is on its way' });
    const path = `${this.verifyPath}/${encodeURIComponent(send.messageId)}`;
    return this.api.ask(this.request(path, JSON.stringify({ code })), signal, (answer) => this.decideCheck(answer), (reason) => ({ kind: 'unavailable', reason }));
  }

  private request(path: string, body: string) {
    return { path, headers: { authorization: this.authorization, 'content-type': 'application/json' }, body };
  }

  /** 202 with a request_id is taken; throttling and 5xx are transient; anything else is permanent. Vonage's own words are never repeated: they may echo the number. */
  private decideSend({ status, retryAfter, body }: HttpAnswer): SendResult {
    if (status === 202 || status === 200) {
      const requestId = nonEmptyString(jsonObject(body)?.request_id);
      return requestId !== null ? { kind: 'accepted', messageId: requestId } : { kind: 'permanent', reason: `Vonage Verify: HTTP ${status} without a request_id` };
    }
    if (status === 429 || status >= 500) return transient(`Vonage Verify: ${status === 429 ? 'throttled' : 'server error'} (HTTP ${status})`, retryAfter);
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status }, 'Vonage Verify refused the credentials');
      return { kind: 'permanent', reason: `Vonage Verify refused the credentials (VONAGE_API_KEY / VONAGE_API_SECRET; HTTP ${status})` };
    }
    if (status === 409) return { kind: 'permanent', reason: 'Vonage Verify refused a second request to this number while one is in progress (HTTP 409)' };
    return { kind: 'permanent', reason: `Vonage Verify refused the request (HTTP ${status})` };
  }

  private decideCheck({ status }: HttpAnswer): ServiceCheck {
    if (status === 200) return { kind: 'right' };
    if (status === 400) return { kind: 'wrong', detail: 'Vonage Verify: invalid code (HTTP 400)' };
    if (status === 404 || status === 410) return { kind: 'wrong', detail: `Vonage Verify: the request is gone (HTTP ${status})` };
    if (status === 401 || status === 403) this.context.logger.warn({ provider: this.name, status }, 'Vonage Verify refused the credentials');
    return { kind: 'unavailable', reason: `Vonage Verify: HTTP ${status}` };
  }
}
