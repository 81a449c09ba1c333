import type {
  CallbackRequest,
  CallbackResult,
  DeliveryReceipt,
  Outgoing,
  Provider,
  ProviderContext,
  ProviderModule,
  ProviderSettings,
  SendResult,
  SettingValues,
} from '../channels/provider-port.js';
import {
  HttpApi,
  jsonObject,
  mediaType,
  parseBaseUrl,
  parseMatching,
  parseSecret,
  transient,
  type HttpAnswer,
} from './http-provider.js';
import { isTwilioSignatureValid } from './twilio-signature.js';

const settings = {
  TWILIO_ACCOUNT_SID: {
    doc: 'Twilio account SID (AC followed by 32 hex digits); the user name of the API calls and part of their path.',
    default: undefined,
    required: true as const,
    parse: parseMatching(/^AC[0-9a-f]{32}$/i, 'must be an account SID: AC followed by 32 hex digits'),
  },
  TWILIO_AUTH_TOKEN: {
    doc: "Twilio auth token: the password of the API calls and the key Twilio's callbacks are signed with.",
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseSecret('auth token'),
  },
  TWILIO_BASE_URL: {
    doc: "Twilio's REST API; set it to a proxy or a local stand-in.",
    default: 'https://api.twilio.com',
    required: false,
    parse: parseBaseUrl('https://api.twilio.com'),
  },
  TWILIO_MESSAGING_SERVICE_SID: {
    doc: 'Optional Messaging Service SID (MG...): when set, messages go out through it (MessagingServiceSid) instead of From.',
    default: undefined,
    required: false,
    parse: parseMatching(/^MG[0-9a-f]{32}$/i, 'must be a Messaging Service SID: MG followed by 32 hex digits'),
  },
} satisfies ProviderSettings;

/** Twilio Programmable Messaging (SMS), with signed delivery callbacks. */
export const twilioSms: ProviderModule<typeof settings> = {
  name: 'twilio',
  channels: ['sms'],
  settings,
  callbacks: true,
  create: (values, context) => new TwilioSmsProvider(values, context),
};

/**
 * Twilio error codes of a number or sender that no retry can fix, with what they mean
 * (https://www.twilio.com/docs/api/errors). Every 4xx is permanent anyway; these name the reason.
 */
const numberErrors: Readonly<Record<number, string>> = {
  21211: "invalid 'To' number",
  21212: "invalid 'From' number",
  21214: "'To' number cannot be reached",
  21217: "'To' number does not appear to be valid",
  21219: "'To' number not verified (trial account)",
  21401: 'invalid phone number',
  21407: 'this number type does not support SMS',
  21408: "sending to the 'To' number's region is not enabled",
  21421: 'invalid phone number',
  21606: "'From' number cannot send messages to this destination",
  21610: "'To' number has unsubscribed (STOP)",
  21612: "'To' number is not reachable via SMS from this sender",
  21614: "'To' number is not a mobile number",
  21660: "'From' number does not belong to this account",
  30003: 'unreachable handset',
  30004: 'message blocked',
  30005: 'unknown destination handset',
  30006: 'landline or unreachable carrier',
  30007: 'message filtered by the carrier',
};

/** Twilio error codes of throttling: retrying later helps, whatever the HTTP status. */
const throttlingErrors: ReadonlySet<number> = new Set([20429, 14107]);

/** MessageStatus of a status callback -> our receipt status; absent: not a delivery outcome (inbound, unknown). */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  accepted: 'SENT',
  scheduled: 'SENT',
  queued: 'SENT',
  sending: 'SENT',
  sent: 'SENT',
  delivered: 'DELIVERED',
  read: 'DELIVERED',
  undelivered: 'UNDELIVERED',
  failed: 'UNDELIVERED',
  canceled: 'UNDELIVERED',
};

class TwilioSmsProvider implements Provider {
  readonly name = 'twilio';
  readonly channels = ['sms'] as const;
  private readonly api: HttpApi;
  private readonly messagesPath: string;
  private readonly authorization: string;

  constructor(
    private readonly values: SettingValues<typeof settings>,
    private readonly context: ProviderContext,
  ) {
    const { TWILIO_ACCOUNT_SID: accountSid, TWILIO_AUTH_TOKEN: authToken, TWILIO_BASE_URL: baseUrl } = values;
    this.api = new HttpApi(baseUrl.origin, 'Twilio');
    this.messagesPath = `${baseUrl.pathPrefix}/2010-04-01/Accounts/${accountSid}/Messages.json`;
    this.authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return { kind: 'permanent', reason: 'the twilio provider sends SMS only' };
    const form = new URLSearchParams({ To: message.to });
    const serviceSid = this.values.TWILIO_MESSAGING_SERVICE_SID;
    if (serviceSid !== undefined) {
      form.set('MessagingServiceSid', serviceSid);
    } else {
      form.set('From', message.from);
    }
    form.set('Body', message.text);
    // Twilio signs its callbacks with the auth token, so the URL carries nothing secret.
    if (this.context.callbackUrl !== null) form.set('StatusCallback', this.context.callbackUrl);
    const headers = { authorization: this.authorization, 'content-type': 'application/x-www-form-urlencoded' };
    return this.api.post({ path: this.messagesPath, headers, body: form.toString() }, signal, (answer) => this.decide(answer));
  }

  verifyCallback(request: CallbackRequest): CallbackResult {
    if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'Twilio callbacks are POSTs' };
    if (mediaType(request.headers['content-type']) !== 'application/x-www-form-urlencoded') {
      // A JSON body would be covered only by a bodySHA256 in the URL, which our callback URL never has.
      return { kind: 'forbidden', reason: 'Twilio status callbacks are form-encoded' };
    }
    const signature = request.headers['x-twilio-signature'];
    if (signature === undefined || signature === '') return { kind: 'forbidden', reason: 'no X-Twilio-Signature' };
    const form = new URLSearchParams(request.rawBody.toString('utf8'));
    if (!isTwilioSignatureValid(this.values.TWILIO_AUTH_TOKEN, signature, request.url, form)) {
      return { kind: 'forbidden', reason: 'X-Twilio-Signature does not match' };
    }
    const messageId = form.get('MessageSid');
    const twilioStatus = form.get('MessageStatus');
    const status = twilioStatus === null ? undefined : receiptStatuses[twilioStatus];
    if (messageId === null || messageId === '' || twilioStatus === null || status === undefined) {
      return { kind: 'receipts', receipts: [] };
    }
    const errorCode = form.get('ErrorCode');
    const detail = errorCode !== null && errorCode !== '' ? `${twilioStatus} (ErrorCode ${errorCode})` : twilioStatus;
    return { kind: 'receipts', receipts: [{ messageId, status, detail, at: null }] };
  }

  /** Maps one answer of the Messages API to a result. Never includes Twilio's message text: it may echo the number. */
  private decide({ status, retryAfter, body }: HttpAnswer): SendResult {
    const json = jsonObject(body);
    const code = typeof json?.code === 'number' ? json.code : null;
    const what = `HTTP ${status}${code !== null ? `, error ${code}` : ''}`;
    if (status === 200 || status === 201) {
      if (typeof json?.sid === 'string' && json.sid !== '') return { kind: 'accepted', messageId: json.sid };
      // It may well have been taken: a retry through Twilio could send the code twice.
      return { kind: 'permanent', reason: `Twilio: ${what} without a message sid` };
    }
    const throttled = status === 429 || (code !== null && throttlingErrors.has(code));
    if (throttled || status >= 500) {
      const reason = throttled ? `Twilio: throttled (${what})` : `Twilio: server error (${what})`;
      return transient(reason, retryAfter);
    }
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status, twilioCode: code }, 'Twilio refused the credentials');
      return { kind: 'permanent', reason: `Twilio refused the credentials (TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN; ${what})` };
    }
    if (status >= 400) {
      const meaning = code !== null ? numberErrors[code] : undefined;
      return { kind: 'permanent', reason: `Twilio refused the message: ${meaning ? `${meaning} (${what})` : what}` };
    }
    return { kind: 'permanent', reason: `Twilio: unexpected answer (${what})` };
  }
}
