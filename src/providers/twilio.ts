import type {
  CallbackRequest,
  CallbackResult,
  Outgoing,
  Provider,
  ProviderContext,
  ProviderModule,
  ProviderSettings,
  SendResult,
  SettingValues,
} from '../channels/provider-port.js';
import { mediaType, parseBaseUrl, parseMatching, parseSecret } from './http-provider.js';
import { TwilioAccountApi } from './twilio-api.js';
import { isTwilioSignatureValid } from './twilio-signature.js';
import { TwilioMessages, type TwilioWhatsApp } from './twilio-sms.js';
import { TwilioSpokenCalls, voiceCallbackPath } from './twilio-spoken-code.js';
import { defaultHangUpTiming, TwilioCalls, type HangUpTiming } from './twilio-voice.js';

/** The Twilio account's settings, shared with twilio-verify (src/providers/twilio-verify.ts). */
export const twilioAccountSettings = {
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
} satisfies ProviderSettings;

const settings = {
  ...twilioAccountSettings,
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
  TWILIO_WHATSAPP_SENDER: {
    doc: 'The WhatsApp sender registered in Twilio (E.164): WhatsApp codes come From whatsapp:<this>. Required with twilio in WHATSAPP_PROVIDER.',
    default: undefined,
    required: false,
    requiredFor: ['whatsapp'],
    parse: parseMatching(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number, e.g. +15551234567'),
  },
  TWILIO_WHATSAPP_CONTENT_SID: {
    doc: 'The Content SID (HX...) of the approved WhatsApp authentication template in Twilio\'s Content Template Builder; its variable {{1}} is the code. Required with twilio in WHATSAPP_PROVIDER.',
    default: undefined,
    required: false,
    requiredFor: ['whatsapp'],
    parse: parseMatching(/^HX[0-9a-f]{32}$/i, 'must be a Content SID: HX followed by 32 hex digits'),
  },
} satisfies ProviderSettings;

export type TwilioSettings = SettingValues<typeof settings>;

/**
 * Twilio: SMS and WhatsApp through Programmable Messaging, dropped calls and calls that read the code through
 * Programmable Voice, one instance for every channel (one connection pool, one callback route /callbacks/twilio,
 * voice calls' under /callbacks/twilio/voice) with signed status callbacks.
 */
export const twilio: ProviderModule<typeof settings> = {
  name: 'twilio',
  channels: ['sms', 'call', 'whatsapp', 'voice'],
  settings,
  callbacks: true,
  create: (values, context) => new TwilioProvider(values, context),
};

/** The WhatsApp sender and template, when both are set (the start requires them with twilio in WHATSAPP_PROVIDER). */
function whatsappSettings(values: TwilioSettings): TwilioWhatsApp | null {
  const sender = values.TWILIO_WHATSAPP_SENDER;
  const contentSid = values.TWILIO_WHATSAPP_CONTENT_SID;
  return sender !== undefined && contentSid !== undefined ? { sender, contentSid } : null;
}

export class TwilioProvider implements Provider {
  readonly name = 'twilio';
  readonly channels = ['sms', 'call', 'whatsapp', 'voice'] as const;
  /** The account SID its messages and calls belong to. */
  readonly account: string;
  private readonly api: TwilioAccountApi;
  private readonly messages: TwilioMessages;
  private readonly calls: TwilioCalls;
  private readonly spoken: TwilioSpokenCalls;

  /** `hangUpTiming` is the service's default; tests shorten it. */
  constructor(
    private readonly values: TwilioSettings,
    context: ProviderContext,
    hangUpTiming: HangUpTiming = defaultHangUpTiming,
  ) {
    this.account = values.TWILIO_ACCOUNT_SID;
    this.api = new TwilioAccountApi(values.TWILIO_ACCOUNT_SID, values.TWILIO_AUTH_TOKEN, values.TWILIO_BASE_URL);
    this.messages = new TwilioMessages(this.api, context, values.TWILIO_MESSAGING_SERVICE_SID, whatsappSettings(values));
    this.calls = new TwilioCalls(this.api, context, hangUpTiming);
    this.spoken = new TwilioSpokenCalls(this.api, context);
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  /** Lets hang-ups in flight end (they are bounded), then closes the connections once sends in flight have ended. */
  async stop(): Promise<void> {
    await this.calls.settle();
    await this.api.close();
  }

  send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    switch (message.channel) {
      case 'sms':
        return this.messages.send(message, signal);
      case 'whatsapp':
        return this.messages.sendWhatsApp(message, signal);
      case 'call':
        return this.calls.place(message, signal);
      case 'voice':
        return this.spoken.place(message, signal);
      case 'telegram':
        return Promise.resolve({ kind: 'permanent', reason: 'twilio does not deliver Telegram messages' });
      case 'silent':
        return Promise.resolve({ kind: 'permanent', reason: 'twilio does not verify numbers silently' });
    }
  }

  /**
   * One route for every kind of status callback, told apart by what they carry: a call's has CallSid and
   * CallStatus, a message's MessageSid and MessageStatus; a voice call's comes to the `/voice` path. All are signed
   * the same way, over the whole URL.
   */
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
    const receipts = !form.has('CallStatus')
      ? this.messages.receipts(form)
      : (request.url.split('?')[0] ?? '').endsWith(voiceCallbackPath)
        ? this.spoken.statusCallback(form)
        : this.calls.statusCallback(form);
    return { kind: 'receipts', receipts };
  }
}
