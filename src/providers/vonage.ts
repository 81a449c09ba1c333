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
import { parseBaseUrl, parseMatching } from './http-provider.js';
import { VonageSmsProvider, vonageSmsSettings } from './vonage-sms.js';
import { parsePrivateKey } from './vonage-jwt.js';
import { VonageVoiceCalls, vonageVoiceCallbackPath } from './vonage-voice.js';

const settings = {
  ...vonageSmsSettings,
  VONAGE_APPLICATION_ID: {
    doc: 'The Vonage application (with Voice enabled) that voice calls are placed as: its id, a UUID. Required with VOICE_PROVIDER=vonage.',
    default: undefined,
    required: false,
    requiredFor: ['voice'],
    parse: parseMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be the application id: a UUID'),
  },
  VONAGE_PRIVATE_KEY: {
    doc: "The application's private key, which signs the JWT of each Voice API request: PEM text (newlines may be written \\n) or the path of the private.key file Vonage gave. Required with VOICE_PROVIDER=vonage.",
    default: undefined,
    required: false,
    requiredFor: ['voice'],
    secret: true,
    parse: parsePrivateKey,
  },
  VONAGE_VOICE_BASE_URL: {
    doc: "Vonage's Voice API (calls go to /v1/calls under it); set it to a proxy or a local stand-in.",
    default: 'https://api.nexmo.com',
    required: false,
    parse: parseBaseUrl('https://api.nexmo.com'),
  },
} satisfies ProviderSettings;

export type VonageSettings = SettingValues<typeof settings>;

/**
 * Vonage: SMS through the SMS API (signed delivery receipts at /callbacks/vonage) and calls that read the code
 * through the Voice API (signed call events at /callbacks/vonage/voice), one instance for both channels.
 */
export const vonage: ProviderModule<typeof settings> = {
  name: 'vonage',
  channels: ['sms', 'voice'],
  settings,
  callbacks: true,
  create: (values, context) => new VonageProvider(values, context),
};

export class VonageProvider implements Provider {
  readonly name = 'vonage';
  readonly channels = ['sms', 'voice'] as const;
  private readonly sms: VonageSmsProvider;
  /** Null without an application (the provider is named for SMS only). */
  private readonly voice: VonageVoiceCalls | null;

  constructor(values: VonageSettings, context: ProviderContext) {
    this.sms = new VonageSmsProvider(values, context);
    const { VONAGE_APPLICATION_ID: applicationId, VONAGE_PRIVATE_KEY: privateKey } = values;
    this.voice =
      applicationId !== undefined && privateKey !== undefined
        ? new VonageVoiceCalls(
            { applicationId, privateKey, signatureSecret: values.VONAGE_SIGNATURE_SECRET, apiKey: values.VONAGE_API_KEY, baseUrl: values.VONAGE_VOICE_BASE_URL },
            context,
          )
        : null;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await Promise.all([this.sms.stop(), this.voice?.close()]);
  }

  send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'voice') return this.sms.send(message, signal);
    if (this.voice === null) return Promise.resolve({ kind: 'permanent', reason: 'vonage: VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY are not set' });
    return this.voice.place(message, signal);
  }

  /** Call events come to the `/voice` path, signed as webhooks; anything else is an SMS receipt. */
  verifyCallback(request: CallbackRequest): CallbackResult {
    if ((request.url.split('?')[0] ?? '').endsWith(vonageVoiceCallbackPath)) {
      return this.voice === null ? { kind: 'forbidden', reason: 'no Vonage voice application is configured' } : this.voice.eventCallback(request);
    }
    return this.sms.verifyCallback(request);
  }
}
