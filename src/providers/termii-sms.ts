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
import { isGsm7 } from '../domain/gsm7.js';
import {
  e164Digits,
  HttpApi,
  jsonObject,
  parseBaseUrl,
  parseMatching,
  parseOneOf,
  parseSecret,
  transient,
  type HttpAnswer,
} from './http-provider.js';
import { isTermiiSignatureValid } from './termii-signature.js';

const termiiChannels = ['generic', 'dnd'] as const;

const settings = {
  TERMII_API_KEY: {
    doc: 'Termii API key (Termii dashboard); sent in the body of each request.',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseSecret('API key'),
  },
  TERMII_SECRET_KEY: {
    doc: "Termii secret key (Termii dashboard): checks the X-Termii-Signature of the delivery reports Termii posts to the webhook URL set in its console (PUBLIC_BASE_URL/callbacks/termii).",
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseSecret('secret key'),
  },
  TERMII_SENDER_ID: {
    doc: "Sender ID registered with Termii (3 to 11 characters); unset: the message's own sender (SMS_SENDER_NUMBER).",
    default: undefined,
    required: false,
    parse: parseMatching(
      /^[A-Za-z0-9](?:[A-Za-z0-9 .&-]{1,9})[A-Za-z0-9]$/,
      'must be a sender ID of 3 to 11 letters, digits, spaces, dots, & or -',
    ),
  },
  TERMII_CHANNEL: {
    doc: "Termii route: generic (promotional; no delivery to numbers on DND) or dnd (transactional, which Termii recommends for codes; it must be enabled on the account).",
    default: 'generic',
    required: false,
    parse: parseOneOf(termiiChannels),
  },
  TERMII_BASE_URL: {
    doc: "Termii's API; set it to a proxy or a local stand-in.",
    default: 'https://api.ng.termii.com',
    required: false,
    parse: parseBaseUrl('https://api.ng.termii.com'),
  },
} satisfies ProviderSettings;

/** Termii messaging API (SMS), with signed delivery-report events. */
export const termiiSms: ProviderModule<typeof settings> = {
  name: 'termii',
  channels: ['sms'],
  settings,
  callbacks: true,
  create: (values, context) => new TermiiSmsProvider(values, context),
};

/**
 * Refusals Termii names in its answer's `message` (https://developer.termii.com/error, "Common Errors"), matched
 * without regard to case; the reason is ours, never Termii's text (which may echo the number). All are
 * permanent for Termii: none clears by retrying in seconds.
 */
const refusals: readonly { readonly pattern: RegExp; readonly meaning: string; readonly credentials?: true }[] = [
  { pattern: /insufficient (?:balance|fund|credit)/i, meaning: 'insufficient balance' },
  { pattern: /sender ?id/i, meaning: 'sender ID not registered or not approved' },
  { pattern: /not set ?up on this route|\broute\b/i, meaning: 'route to this destination not enabled' },
  { pattern: /account is not active|not active/i, meaning: 'account not active' },
  { pattern: /daily limit/i, meaning: 'daily limit reached' },
  { pattern: /(?:invalid|wrong).*(?:phone|number|recipient)|(?:phone|number).*invalid/i, meaning: 'invalid phone number' },
  { pattern: /unauthori[sz]ed|api ?key/i, meaning: 'API key refused', credentials: true },
];

/**
 * A delivery report's `status` (lower case) -> our receipt status (https://developer.termii.com/events-and-reports,
 * "Status of messages sent"); absent: not one we know.
 */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  'message sent': 'SENT',
  sent: 'SENT',
  delivered: 'DELIVERED',
  'dnd active on phone number': 'UNDELIVERED',
  'message failed': 'UNDELIVERED',
  failed: 'UNDELIVERED',
  rejected: 'UNDELIVERED',
  expired: 'UNDELIVERED',
};

class TermiiSmsProvider implements Provider {
  readonly name = 'termii';
  readonly channels = ['sms'] as const;
  private readonly api: HttpApi;
  private readonly path: string;

  constructor(
    private readonly values: SettingValues<typeof settings>,
    private readonly context: ProviderContext,
  ) {
    this.api = new HttpApi(values.TERMII_BASE_URL.origin, 'Termii');
    this.path = `${values.TERMII_BASE_URL.pathPrefix}/api/sms/send`;
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return { kind: 'permanent', reason: 'the termii provider sends SMS only' };
    // Termii has no per-message callback URL: delivery reports go to the webhook set in its console.
    const body = JSON.stringify({
      api_key: this.values.TERMII_API_KEY,
      to: e164Digits(message.to),
      from: this.values.TERMII_SENDER_ID ?? e164Digits(message.from),
      sms: message.text,
      type: isGsm7(message.text) ? 'plain' : 'unicode',
      channel: this.values.TERMII_CHANNEL,
    });
    const headers = { 'content-type': 'application/json' };
    return this.api.post({ path: this.path, headers, body }, signal, (answer) => this.decide(answer));
  }

  /** Reads a delivery-report event, signed with X-Termii-Signature over its raw JSON body. */
  verifyCallback(request: CallbackRequest): CallbackResult {
    if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'Termii events are POSTs' };
    const signature = request.headers['x-termii-signature'];
    if (signature === undefined || signature === '') return { kind: 'forbidden', reason: 'no X-Termii-Signature' };
    if (!isTermiiSignatureValid(this.values.TERMII_SECRET_KEY, signature, request.rawBody)) {
      return { kind: 'forbidden', reason: 'X-Termii-Signature does not match' };
    }
    const raw = request.rawBody.toString('utf8');
    const event = jsonObject(raw);
    if (event === null) return { kind: 'receipts', receipts: [] };
    const messageId = idField(event, 'message_id', raw);
    const termiiStatus = typeof event.status === 'string' ? event.status.trim() : null;
    const status = termiiStatus === null ? undefined : receiptStatuses[termiiStatus.toLowerCase()];
    if (messageId === null || termiiStatus === null || status === undefined) return { kind: 'receipts', receipts: [] };
    return { kind: 'receipts', receipts: [{ messageId, status, detail: termiiStatus, at: null }] };
  }

  /** Maps one answer of the send API to a result. */
  private decide({ status, retryAfter, body }: HttpAnswer): SendResult {
    if (status === 429 || status >= 500) {
      return transient(status === 429 ? `Termii: throttled (HTTP ${status})` : `Termii: server error (HTTP ${status})`, retryAfter);
    }
    const raw = body?.toString('utf8') ?? '';
    const json = jsonObject(raw);
    const said = typeof json?.message === 'string' ? json.message : '';
    const refusal = refusals.find((r) => r.pattern.test(said));
    if (status === 200 || status === 201) {
      const messageId = json === null ? null : (idField(json, 'message_id_str', raw) ?? idField(json, 'message_id', raw));
      if (messageId !== null) return { kind: 'accepted', messageId };
      if (refusal !== undefined) return this.refused(status, refusal);
      // It may well have been taken: a retry through Termii could send the code twice.
      return { kind: 'permanent', reason: `Termii: HTTP ${status} without a message_id` };
    }
    if (status >= 400) return this.refused(status, refusal);
    return { kind: 'permanent', reason: `Termii: unexpected answer (HTTP ${status})` };
  }

  private refused(status: number, refusal: (typeof refusals)[number] | undefined): SendResult {
    if (refusal?.credentials === true || status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status }, 'Termii refused the API key');
      return { kind: 'permanent', reason: `Termii refused the API key (TERMII_API_KEY; HTTP ${status})` };
    }
    return { kind: 'permanent', reason: `Termii refused the message: ${refusal ? `${refusal.meaning} (HTTP ${status})` : `HTTP ${status}`}` };
  }
}

/**
 * A message id field of a JSON object as a string. Termii sends 19-digit ids that may be JSON numbers, which
 * JSON.parse rounds: an unsafe integer is read back from the raw text, and only when that text names it once.
 */
function idField(object: Readonly<Record<string, unknown>>, name: string, rawText: string): string | null {
  const value = object[name];
  if (typeof value === 'string') return value.trim() === '' ? null : value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return null;
  if (Number.isSafeInteger(value)) return String(value);
  const matches = [...rawText.matchAll(new RegExp(`"${name}"\\s*:\\s*(\\d+)`, 'g'))];
  return matches.length === 1 ? (matches[0]?.[1] ?? null) : null;
}
