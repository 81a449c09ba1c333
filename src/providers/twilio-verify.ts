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
import { HttpApi, jsonObject, parseBaseUrl, parseMatching, type HttpAnswer } from './http-provider.js';
import { decideTwilioAnswer, twilioErrorCode, type TwilioRequestKind } from './twilio-api.js';
import { twilioAccountSettings } from './twilio.js';

const settings = {
  ...twilioAccountSettings,
  TWILIO_VERIFY_SERVICE_SID: {
    doc: 'The Twilio Verify service (VA followed by 32 hex digits) that makes, sends and checks the code of sends through twilio-verify. Required with twilio-verify in a provider list.',
    default: undefined,
    required: true as const,
    parse: parseMatching(/^VA[0-9a-f]{32}$/i, 'must be a Verify service SID: VA followed by 32 hex digits'),
  },
  TWILIO_VERIFY_BASE_URL: {
    doc: "Twilio Verify's API (v2); set it to a proxy or a local stand-in.",
    default: 'https://verify.twilio.com',
    required: false,
    parse: parseBaseUrl('https://verify.twilio.com'),
  },
} satisfies ProviderSettings;

export type TwilioVerifySettings = SettingValues<typeof settings>;

/**
 * twilio-verify (contract 19): Twilio Verify v2 as an SMS provider. Twilio makes the code, sends it (its fraud
 * guard and its price per verification apply) and checks it; nothing of our code goes to it. It sends no
 * delivery callbacks here.
 */
export const twilioVerify: ProviderModule<typeof settings> = {
  name: 'twilio-verify',
  channels: ['sms'],
  settings,
  callbacks: false,
  create: (values, context) => new TwilioVerifyProvider(values, context),
};

/** Twilio Verify's error codes of a Verification that no retry fixes (https://www.twilio.com/docs/api/errors). */
const verification: TwilioRequestKind = {
  noun: 'verification',
  errors: {
    20404: 'the Verify service was not found (TWILIO_VERIFY_SERVICE_SID)',
    60200: 'invalid parameter',
    60205: 'SMS is not supported by landline phone number',
    60220: 'use of this channel is blocked for this number',
    60410: 'the number is blocked by Verify Fraud Guard',
    60605: 'verification delivery to this country is blocked (geo permissions)',
  },
};

/** Check answers of Twilio that mean the verification cannot be approved any more (gone, used up). */
const goneErrors: ReadonlySet<number> = new Set([20404, 60202, 60203]);

export class TwilioVerifyProvider implements Provider {
  readonly name = 'twilio-verify';
  readonly channels = ['sms'] as const;
  /** The account SID its verifications belong to. */
  readonly account: string;
  private readonly api: HttpApi;
  private readonly authorization: string;
  /** `<prefix>/v2/Services/<ServiceSid>`: both resources used here are below it. */
  private readonly servicePath: string;

  constructor(
    values: TwilioVerifySettings,
    private readonly context: ProviderContext,
  ) {
    this.account = values.TWILIO_ACCOUNT_SID;
    const base = values.TWILIO_VERIFY_BASE_URL;
    this.api = new HttpApi(base.origin, 'Twilio Verify');
    this.servicePath = `${base.pathPrefix}/v2/Services/${values.TWILIO_VERIFY_SERVICE_SID}`;
    this.authorization = `Basic ${Buffer.from(`${values.TWILIO_ACCOUNT_SID}:${values.TWILIO_AUTH_TOKEN}`).toString('base64')}`;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  /**
   * POST /Verifications with To and Channel=sms, never a code of ours: Twilio makes its own. Another POST for the
   * same To while one is pending sends that code again (a resend). The Verification's sid is the send's id.
   */
  send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return Promise.resolve({ kind: 'permanent', reason: 'twilio-verify sends SMS codes only' });
    // A relayed code or a caller's own text is not ours to replace with the service's: the next provider sends it.
    if (message.codeIsGiven === true) return Promise.resolve({ kind: 'permanent', reason: 'twilio-verify sends its own code: a given code or text goes through another provider' });
    const form = new URLSearchParams({ To: message.to, Channel: 'sms' });
    return this.api.post(this.request('/Verifications', form), signal, (answer) => decideTwilioAnswer(answer, verification, this.context.logger));
  }

  /** POST /VerificationCheck with the Code and the VerificationSid (the To while a resend's sid is not known yet). */
  checkCode(send: ServiceSend, code: string, signal: AbortSignal): Promise<ServiceCheck> {
    const form = new URLSearchParams(send.messageId !== null ? { VerificationSid: send.messageId } : { To: send.to });
    form.set('Code', code);
    return this.api.ask(this.request('/VerificationCheck', form), signal, (answer) => this.decideCheck(answer), (reason) => ({ kind: 'unavailable', reason }));
  }

  private request(resource: string, form: URLSearchParams) {
    return {
      path: `${this.servicePath}${resource}`,
      headers: { authorization: this.authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    };
  }

  /**
   * `approved` is right; any other status (pending) is wrong; a verification Twilio no longer has (expired,
   * approved already, its attempts used up) is wrong too: no code can prove the number with it. Throttling, 5xx and
   * refused credentials decide nothing.
   */
  private decideCheck({ status, body }: HttpAnswer): ServiceCheck {
    const code = twilioErrorCode({ status, body, retryAfter: undefined });
    const what = `HTTP ${status}${code !== null ? `, error ${code}` : ''}`;
    if (status === 200 || status === 201) {
      const answered = jsonObject(body)?.status;
      if (answered === 'approved') return { kind: 'right' };
      return { kind: 'wrong', detail: `Twilio Verify: ${typeof answered === 'string' ? answered : 'no status'}` };
    }
    if (code !== null && goneErrors.has(code)) return { kind: 'wrong', detail: `Twilio Verify: the verification is gone (${what})` };
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status, twilioCode: code }, 'Twilio Verify refused the credentials');
      return { kind: 'unavailable', reason: `Twilio Verify refused the credentials (${what})` };
    }
    if (status === 400) return { kind: 'wrong', detail: `Twilio Verify refused the code (${what})` };
    return { kind: 'unavailable', reason: `Twilio Verify: ${what}` };
  }
}
