import type {
  CallbackRequest,
  CallbackResult,
  DeliveryReceipt,
  Outgoing,
  Provider,
  ProviderContext,
  ProviderSettings,
  SendResult,
  SettingValues,
} from '../channels/provider-port.js';
import { isCurrency, parseAmount, sum, type Amount, type Money } from '../domain/money.js';
import { systemClock } from '../domain/ports.js';
import { isGsm7 } from '../domain/gsm7.js';
import {
  e164Digits,
  HttpApi,
  jsonObject,
  mediaType,
  parseBaseUrl,
  parseMatching,
  parseOneOf,
  parseSecret,
  transient,
  type HttpAnswer,
} from './http-provider.js';
import {
  checkVonageSignature,
  vonageSignature,
  vonageSignatureMethods,
} from './vonage-signature.js';

export const vonageSmsSettings = {
  VONAGE_API_KEY: {
    doc: 'Vonage API key (8 characters, on the Vonage dashboard).',
    default: undefined,
    required: true as const,
    parse: parseMatching(/^[A-Za-z0-9]{8}$/, 'must be the API key: 8 letters or digits'),
  },
  VONAGE_API_SECRET: {
    doc: 'Vonage API secret: sends with HTTP Basic authentication. Unset: every send is a signed request (VONAGE_SIGNATURE_SECRET) instead.',
    default: undefined,
    required: false,
    secret: true,
    parse: parseSecret('API secret'),
  },
  VONAGE_SIGNATURE_SECRET: {
    doc: "Vonage signature secret (dashboard, API settings): checks the signed delivery receipts and voice call events Vonage sends (ask Vonage to enable signed webhooks), and signs SMS sends when VONAGE_API_SECRET is unset.",
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseSecret('signature secret'),
  },
  VONAGE_SIGNATURE_METHOD: {
    doc: 'The signature method chosen on the Vonage dashboard: md5hash (its default), md5, sha1, sha256 or sha512 (the HMACs are stronger).',
    default: 'md5hash',
    required: false,
    parse: parseOneOf(vonageSignatureMethods),
  },
  VONAGE_BASE_URL: {
    doc: "Vonage's SMS API; set it to a proxy or a local stand-in.",
    default: 'https://rest.nexmo.com',
    required: false,
    parse: parseBaseUrl('https://rest.nexmo.com'),
  },
  VONAGE_CURRENCY: {
    doc: "The currency of the Vonage account (ISO 4217), which the SMS API's message-price is in (its answer does not name it). A send's price counts as its cost only when this is COST_CURRENCY.",
    default: 'EUR',
    required: false,
    parse: (raw: string): string => {
      const code = raw.trim().toUpperCase();
      if (!isCurrency(code)) throw new Error(`must be an ISO 4217 currency code (EUR, USD, GBP), got "${raw}"`);
      return code;
    },
  },
} satisfies ProviderSettings;

/** Vonage's `callback` parameter holds at most 100 characters (SMS API reference). */
const maxCallbackLength = 100;

/**
 * `messages[].status` of an SMS API answer other than 0 (https://developer.vonage.com/en/api-errors/sms): whether
 * retrying through Vonage can help, and what it means. A status not listed is permanent.
 */
const sendStatuses: Readonly<Record<string, { readonly retry: boolean; readonly meaning: string }>> = {
  '1': { retry: true, meaning: 'throttled' },
  '2': { retry: false, meaning: 'missing parameters' },
  '3': { retry: false, meaning: 'invalid parameters' },
  '4': { retry: false, meaning: 'invalid credentials' },
  '5': { retry: true, meaning: 'internal error' },
  '6': { retry: false, meaning: 'invalid message (unrecognised number prefix)' },
  '7': { retry: false, meaning: 'number barred' },
  '8': { retry: false, meaning: 'account barred' },
  '9': { retry: false, meaning: 'insufficient credit' },
  '10': { retry: true, meaning: 'too many existing binds' },
  '11': { retry: false, meaning: 'account not enabled for the SMS API' },
  '12': { retry: false, meaning: 'message too long' },
  '14': { retry: false, meaning: 'invalid signature' },
  '15': { retry: false, meaning: 'sender not allowed' },
  '17': { retry: false, meaning: 'message blocked by the provider' },
  '22': { retry: false, meaning: 'invalid network code' },
  '23': { retry: false, meaning: 'invalid callback URL' },
  '29': { retry: false, meaning: 'destination not whitelisted (demo account)' },
  '32': { retry: false, meaning: 'signature and API secret both sent' },
  '33': { retry: false, meaning: 'number de-activated' },
};

/** A delivery receipt's `status` -> our receipt status; absent: not a status we know. */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  accepted: 'SENT',
  buffered: 'SENT',
  delivered: 'DELIVERED',
  expired: 'UNDELIVERED',
  failed: 'UNDELIVERED',
  rejected: 'UNDELIVERED',
  // "Message is in invalid state and error code received was not known": Vonage's own final word.
  unknown: 'UNDELIVERED',
};

/** The SMS part of the `vonage` provider (src/providers/vonage.ts): the SMS API, with signed delivery receipts. */
export class VonageSmsProvider implements Provider {
  readonly name = 'vonage';
  readonly channels = ['sms'] as const;
  private readonly api: HttpApi;
  private readonly path: string;

  constructor(
    private readonly values: SettingValues<typeof vonageSmsSettings>,
    private readonly context: ProviderContext,
  ) {
    const callback = context.callbackUrl;
    if (callback !== null && callback.length > maxCallbackLength) {
      throw new Error(`vonage: the callback URL (PUBLIC_BASE_URL + /callbacks/vonage) is longer than the ${maxCallbackLength} characters Vonage accepts`);
    }
    this.api = new HttpApi(values.VONAGE_BASE_URL.origin, 'Vonage');
    this.path = `${values.VONAGE_BASE_URL.pathPrefix}/sms/json`;
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return { kind: 'permanent', reason: 'the vonage provider sends SMS only' };
    const form = new URLSearchParams({ from: e164Digits(message.from), to: e164Digits(message.to), text: message.text });
    if (!isGsm7(message.text)) form.set('type', 'unicode');
    if (this.context.callbackUrl !== null) form.set('callback', this.context.callbackUrl);
    form.set('client-ref', message.sendId);
    const { VONAGE_API_KEY: apiKey, VONAGE_API_SECRET: apiSecret } = this.values;
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (apiSecret !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`;
    } else {
      // A signed request carries the key, a timestamp and sig, and never the API secret nor an Authorization header.
      form.set('api_key', apiKey);
      form.set('timestamp', String(Math.floor(systemClock.now().getTime() / 1000)));
      form.set('sig', vonageSignature(this.values.VONAGE_SIGNATURE_SECRET, this.values.VONAGE_SIGNATURE_METHOD, form));
    }
    return this.api.post({ path: this.path, headers, body: form.toString() }, signal, (answer) => this.decide(answer));
  }

  /**
   * Reads a delivery receipt as Vonage sends it: a GET with a query, or a POST of a form or of JSON (the account's
   * webhook method), signed with the signature secret.
   */
  verifyCallback(request: CallbackRequest): CallbackResult {
    const params = receiptParams(request);
    if (params === null) return { kind: 'forbidden', reason: 'not a Vonage delivery receipt (GET query, or POST form or JSON)' };
    const check = checkVonageSignature(this.values.VONAGE_SIGNATURE_SECRET, this.values.VONAGE_SIGNATURE_METHOD, params, systemClock.now());
    if (!check.valid) return { kind: 'forbidden', reason: `Vonage signature: ${check.reason}` };
    const messageId = params.get('messageId');
    const vonageStatus = params.get('status');
    const status = vonageStatus === undefined ? undefined : receiptStatuses[vonageStatus];
    if (messageId === undefined || messageId === '' || vonageStatus === undefined || status === undefined) {
      return { kind: 'receipts', receipts: [] };
    }
    const errCode = params.get('err-code');
    const detail = errCode !== undefined && errCode !== '' && errCode !== '0' ? `${vonageStatus} (err-code ${errCode})` : vonageStatus;
    return { kind: 'receipts', receipts: [{ messageId, status, detail, at: vonageTime(params.get('message-timestamp')) }] };
  }

  /** Maps one SMS API answer to a result. Never includes Vonage's error-text: it may echo the number. */
  private decide({ status, retryAfter, body }: HttpAnswer): SendResult {
    if (status === 429 || status >= 500) {
      return transient(status === 429 ? `Vonage: throttled (HTTP ${status})` : `Vonage: server error (HTTP ${status})`, retryAfter);
    }
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status }, 'Vonage refused the credentials');
      return { kind: 'permanent', reason: `Vonage refused the credentials (VONAGE_API_KEY / VONAGE_API_SECRET; HTTP ${status})` };
    }
    if (status !== 200) return { kind: 'permanent', reason: `Vonage: unexpected answer (HTTP ${status})` };
    const messages = jsonObject(body)?.messages;
    const parts = Array.isArray(messages) ? messages.map(partOf) : [];
    const first = parts[0];
    if (first === undefined) return { kind: 'permanent', reason: 'Vonage: HTTP 200 without messages' };
    const failed = parts.find((p) => p.status !== '0');
    if (failed === undefined) {
      // A long text goes out in parts, each with an id; receipts are matched on the first part's.
      if (first.messageId !== null) {
        const price = this.priceOf(parts);
        return price === null ? { kind: 'accepted', messageId: first.messageId } : { kind: 'accepted', messageId: first.messageId, price };
      }
      // It may well have been taken: a retry through Vonage could send the code twice.
      return { kind: 'permanent', reason: 'Vonage: status 0 without a message-id' };
    }
    if (parts.some((p) => p.status === '0')) {
      return { kind: 'permanent', reason: `Vonage sent only part of the message (status ${failed.status} on another part)` };
    }
    const known = sendStatuses[failed.status];
    const what = `status ${failed.status}${known ? `: ${known.meaning}` : ''}`;
    if (known?.retry === true) return transient(`Vonage: ${what}`, retryAfter);
    if (failed.status === '4' || failed.status === '14') {
      this.context.logger.warn({ provider: this.name, vonageStatus: failed.status }, 'Vonage refused the credentials');
    }
    return { kind: 'permanent', reason: `Vonage refused the message (${what})` };
  }

  /**
   * What the send costs: each part is priced on its own, so the sum of their message-price, in the account's
   * currency; null when a part has none (half a price would understate the cost, where the imported one would not).
   */
  private priceOf(parts: readonly { readonly price: Amount | null }[]): Money | null {
    const prices = parts.map((p) => p.price);
    return prices.every((p) => p !== null) ? { amount: sum(prices), currency: this.values.VONAGE_CURRENCY } : null;
  }
}

/** One entry of `messages[]`: its status ('' when absent), its id and its message-price (normalised), if any. */
function partOf(entry: unknown): { readonly status: string; readonly messageId: string | null; readonly price: Amount | null } {
  if (typeof entry !== 'object' || entry === null) return { status: '', messageId: null, price: null };
  const status = 'status' in entry && (typeof entry.status === 'string' || typeof entry.status === 'number') ? String(entry.status) : '';
  const id = 'message-id' in entry && typeof entry['message-id'] === 'string' && entry['message-id'] !== '' ? entry['message-id'] : null;
  const price = 'message-price' in entry && typeof entry['message-price'] === 'string' ? parseAmount(entry['message-price']) : null;
  return { status, messageId: id, price };
}

/** The receipt's parameters by name (the first value of a repeated one), or null when it is none of Vonage's forms. */
function receiptParams(request: CallbackRequest): Map<string, string> | null {
  const method = request.method.toUpperCase();
  if (method === 'GET') {
    try {
      return firstValues(new URL(request.url).searchParams);
    } catch {
      return null;
    }
  }
  if (method !== 'POST') return null;
  const contentType = mediaType(request.headers['content-type']);
  if (contentType === 'application/x-www-form-urlencoded') return firstValues(new URLSearchParams(request.rawBody.toString('utf8')));
  if (contentType !== 'application/json') return null;
  const json = jsonObject(request.rawBody);
  if (json === null) return null;
  const params = new Map<string, string>();
  for (const [name, value] of Object.entries(json)) {
    // Vonage's checkers read a JSON receipt as a map of strings.
    if (typeof value === 'string') params.set(name, value);
    else if (typeof value === 'number' || typeof value === 'boolean') params.set(name, String(value));
    else if (value !== null) return null;
  }
  return params;
}

function firstValues(search: URLSearchParams): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of search) if (!params.has(name)) params.set(name, value);
  return params;
}

/** `message-timestamp` ("2020-01-01 12:00:00", UTC) as a date; null when absent or unreadable. */
function vonageTime(text: string | undefined): Date | null {
  if (text === undefined || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text)) return null;
  const at = new Date(`${text.replace(' ', 'T')}Z`);
  return Number.isNaN(at.getTime()) ? null : at;
}
