import type {
  CallbackRequest,
  CallbackResult,
  Outgoing,
  OutgoingWhatsApp,
  Provider,
  ProviderContext,
  ProviderModule,
  ProviderSettings,
  SendResult,
  SettingValues,
} from '../../channels/provider-port.js';
import { e164Digits, HttpApi, parseBaseUrl, parseHeaderCredential, parseMatching, parseSecret } from '../http-provider.js';
import { decideMetaAnswer, metaErrorCode, templateMissingInLanguage } from './meta-errors.js';
import { metaHandshake, metaStatusReceipts } from './meta-webhook.js';

export const metaSettings = {
  META_ACCESS_TOKEN: {
    doc: 'A system user access token of the WhatsApp Business app (sent as `Authorization: Bearer`), with whatsapp_business_messaging (and whatsapp_business_management for the template commands).',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseHeaderCredential('Meta access token'),
  },
  META_PHONE_NUMBER_ID: {
    doc: 'The id of the business phone number codes are sent from (WhatsApp Manager > API Setup), not the number itself.',
    default: undefined,
    required: true as const,
    parse: parseMatching(/^\d{1,30}$/, 'must be the phone number id: digits'),
  },
  META_APP_SECRET: {
    doc: "The app's secret (App settings > Basic): the key of the X-Hub-Signature-256 that signs Meta's webhooks.",
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseSecret('app secret'),
  },
  META_WEBHOOK_VERIFY_TOKEN: {
    doc: 'A random token you choose and type into the webhook setup; Meta sends it back in the GET handshake of PUBLIC_BASE_URL/callbacks/meta.',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseSecret('webhook verify token'),
  },
  META_BASE_URL: {
    doc: "Meta's Graph API; set it to a proxy or a local stand-in.",
    default: 'https://graph.facebook.com',
    required: false,
    parse: parseBaseUrl('https://graph.facebook.com'),
  },
  META_API_VERSION: {
    doc: 'The Graph API version in every path.',
    default: 'v23.0',
    required: false,
    parse: parseMatching(/^v\d{1,3}\.\d{1,2}$/, 'must be a Graph API version, e.g. v23.0'),
  },
  WHATSAPP_TEMPLATE: {
    doc: 'The name of the approved authentication template (category AUTHENTICATION, copy-code button); `otp-service whatsapp template create` makes one.',
    default: undefined,
    required: true as const,
    parse: parseMatching(/^[a-z0-9_]{1,512}$/, 'must be a template name: lower-case letters, digits and _'),
  },
  META_WABA_ID: {
    doc: 'The WhatsApp Business Account id; needed only by `otp-service whatsapp template create|list`.',
    default: undefined,
    required: false,
    parse: parseMatching(/^\d{1,30}$/, 'must be the WhatsApp Business Account id: digits'),
  },
} satisfies ProviderSettings;

export type MetaSettings = SettingValues<typeof metaSettings>;

/** Meta's WhatsApp Cloud API: the authentication template with its copy-code button, and signed status webhooks. */
export const metaWhatsApp: ProviderModule<typeof metaSettings> = {
  name: 'meta',
  channels: ['whatsapp'],
  settings: metaSettings,
  callbacks: true,
  create: (values, context) => new MetaWhatsAppProvider(values, context),
};

/** The User-Agent Meta's description asks for (`name/major.minor.patch`). */
export const metaUserAgent = 'otp-service/0.1.0';

/**
 * A verification's locale as Meta's template language code (contract 13): `pt-BR` -> `pt_BR`, and a language
 * Meta names only with a region, English first, gets the region its templates are usually made in.
 */
export function metaLanguage(locale: string | null): string {
  if (locale === null) return 'en_US';
  const [language = '', region] = locale.split('-');
  const lower = language.toLowerCase();
  if (region !== undefined && /^[A-Za-z]{2}$/.test(region)) return `${lower}_${region.toUpperCase()}`;
  return regionless[lower] ?? lower;
}

const regionless: Readonly<Record<string, string>> = { en: 'en_US', pt: 'pt_BR', zh: 'zh_CN' };

class MetaWhatsAppProvider implements Provider {
  readonly name = 'meta';
  readonly channels = ['whatsapp'] as const;
  private readonly api: HttpApi;
  private readonly messagesPath: string;
  private readonly headers: Readonly<Record<string, string>>;

  constructor(
    private readonly values: MetaSettings,
    private readonly context: ProviderContext,
  ) {
    this.api = new HttpApi(values.META_BASE_URL.origin, 'Meta');
    this.messagesPath = `${values.META_BASE_URL.pathPrefix}/${values.META_API_VERSION}/${values.META_PHONE_NUMBER_ID}/messages`;
    this.headers = { authorization: `Bearer ${values.META_ACCESS_TOKEN}`, 'content-type': 'application/json', 'user-agent': metaUserAgent };
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  /**
   * One message, in the verification's language; a template missing in it (132001) is sent once more in en_US.
   * Meta takes no idempotency key: an answer that comes late is still awaited by the send worker and recorded
   * against its attempt, rather than the code sent again.
   */
  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'whatsapp') return { kind: 'permanent', reason: 'the meta provider sends WhatsApp messages only' };
    const language = metaLanguage(message.locale);
    let missing = false;
    const first = await this.post(message, language, signal, (code) => {
      missing = code === templateMissingInLanguage;
    });
    if (!missing || language === 'en_US') return first;
    return this.post(message, 'en_US', signal, () => undefined);
  }

  handshake(request: CallbackRequest): ReturnType<NonNullable<Provider['handshake']>> {
    return metaHandshake(request, this.values.META_WEBHOOK_VERIFY_TOKEN);
  }

  verifyCallback(request: CallbackRequest): CallbackResult {
    return metaStatusReceipts(request, this.values.META_APP_SECRET);
  }

  private post(message: OutgoingWhatsApp, language: string, signal: AbortSignal, seen: (code: number | null) => void): Promise<SendResult> {
    const body = {
      messaging_product: 'whatsapp',
      to: e164Digits(message.to),
      type: 'template',
      template: {
        name: this.values.WHATSAPP_TEMPLATE,
        language: { code: language },
        components: [
          { type: 'body', parameters: [{ type: 'text', text: message.code }] },
          // The copy-code button of an authentication template is a URL button whose parameter is the code.
          { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: message.code }] },
        ],
      },
    };
    return this.api.post({ path: this.messagesPath, headers: this.headers, body: JSON.stringify(body) }, signal, (answer) => {
      seen(metaErrorCode(answer));
      return decideMetaAnswer(answer, this.context.logger);
    });
  }
}
