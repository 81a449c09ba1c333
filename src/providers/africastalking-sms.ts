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
import { isCurrency, parseAmount, type Money } from '../domain/money.js';
import { hasPathSecret, parsePathSecret } from './callback-path-secret.js';
import {
  asObject,
  HttpApi,
  jsonObject,
  mediaType,
  nonEmptyString,
  parseBaseUrl,
  parseHeaderCredential,
  parseMatching,
  transient,
  type HttpAnswer,
} from './http-provider.js';

/**
 * Africa's Talking SMS (`POST /version1/messaging`), with delivery reports.
 *
 * Delivery reports: in the Africa's Talking dashboard, under SMS > SMS Callback URLs > Delivery Reports, set
 * `{PUBLIC_BASE_URL}/callbacks/africastalking/{AFRICASTALKING_CALLBACK_SECRET}`. Africa's Talking posts each
 * report there as a form (id, status, phoneNumber, networkCode, failureReason...) and signs nothing, and the
 * API has no per-message callback URL, so anyone who knew the plain callback URL could forge "delivered" or
 * "failed" reports. The secret at the end of the path is what makes the URL unguessable: a report that does not
 * come to it is refused (403) and changes nothing. Keep that URL out of logs, and change the secret (and the
 * dashboard) if it leaks.
 */

const settings = {
  AFRICASTALKING_USERNAME: {
    doc: "Africa's Talking application username (`sandbox` for the sandbox).",
    default: undefined,
    required: true as const,
    parse: parseMatching(/^[A-Za-z0-9_.@-]{1,100}$/, 'must be the application username: letters, digits, ".", "_", "-" or "@"'),
  },
  AFRICASTALKING_API_KEY: {
    doc: "Africa's Talking API key of that application (sent in the apiKey header).",
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseHeaderCredential("Africa's Talking API key"),
  },
  AFRICASTALKING_BASE_URL: {
    doc: "Africa's Talking API; https://api.sandbox.africastalking.com for the sandbox, or a proxy or local stand-in.",
    default: 'https://api.africastalking.com',
    required: false,
    parse: parseBaseUrl('https://api.africastalking.com'),
  },
  AFRICASTALKING_SENDER_ID: {
    doc:
      "Optional sender: a short code or alphanumeric sender id registered with Africa's Talking. Unset: the account's " +
      'default sender (SMS_SENDER_NUMBER is not used, as Africa\'s Talking refuses senders it has not registered).',
    default: undefined,
    required: false,
    parse: parseMatching(
      /^(?:[A-Za-z0-9][A-Za-z0-9 ._-]{0,10}|\+?[0-9]{3,15})$/,
      'must be a short code, a number, or an alphanumeric sender id of at most 11 characters',
    ),
  },
  AFRICASTALKING_CALLBACK_SECRET: {
    doc:
      'A random secret of at least 32 letters, digits, "-" or "_" (e.g. `openssl rand -hex 32`). Set the delivery reports ' +
      "callback URL in the Africa's Talking dashboard to PUBLIC_BASE_URL/callbacks/africastalking/<this secret>: the reports " +
      'are not signed, so only reports to that URL are believed.',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parsePathSecret,
  },
} satisfies ProviderSettings;

/** Africa's Talking SMS, with dashboard-configured delivery reports authenticated by a secret in their URL. */
export const africastalkingSms: ProviderModule<typeof settings> = {
  name: 'africastalking',
  channels: ['sms'],
  settings,
  callbacks: true,
  create: (values, context) => new AfricasTalkingSmsProvider(values, context),
};

/**
 * A recipient's statusCode in the answer to a send: accepted, or what kind of failure, and its name.
 * 401 RiskHold (the account or message is held for review), 405 InsufficientBalance and 409 DoNotDisturbRejection
 * (Nigeria: promotional sender outside its hours) do not pass within the send retries, so they fail over at once.
 */
const recipientCodes: Readonly<Record<number, { readonly name: string; readonly kind: SendResult['kind'] }>> = {
  100: { name: 'Processed', kind: 'accepted' },
  101: { name: 'Sent', kind: 'accepted' },
  102: { name: 'Queued', kind: 'accepted' },
  401: { name: 'RiskHold', kind: 'permanent' },
  402: { name: 'InvalidSenderId', kind: 'permanent' },
  403: { name: 'InvalidPhoneNumber', kind: 'permanent' },
  404: { name: 'UnsupportedNumberType', kind: 'permanent' },
  405: { name: 'InsufficientBalance', kind: 'permanent' },
  406: { name: 'UserInBlacklist', kind: 'permanent' },
  407: { name: 'CouldNotRoute', kind: 'permanent' },
  409: { name: 'DoNotDisturbRejection', kind: 'permanent' },
  500: { name: 'InternalServerError', kind: 'transient' },
  501: { name: 'GatewayError', kind: 'transient' },
  502: { name: 'RejectedByGateway', kind: 'permanent' },
};

/** The status of a delivery report -> our receipt status; absent: not known, ignored. */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  Sent: 'SENT',
  Submitted: 'SENT',
  Buffered: 'SENT',
  Success: 'DELIVERED',
  Rejected: 'UNDELIVERED',
  Failed: 'UNDELIVERED',
  AbsentSubscriber: 'UNDELIVERED',
  Expired: 'UNDELIVERED',
};

class AfricasTalkingSmsProvider implements Provider {
  readonly name = 'africastalking';
  readonly channels = ['sms'] as const;
  private readonly api: HttpApi;
  private readonly messagingPath: string;

  constructor(
    private readonly values: SettingValues<typeof settings>,
    private readonly context: ProviderContext,
  ) {
    this.api = new HttpApi(values.AFRICASTALKING_BASE_URL.origin, "Africa's Talking");
    this.messagingPath = `${values.AFRICASTALKING_BASE_URL.pathPrefix}/version1/messaging`;
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return { kind: 'permanent', reason: 'the africastalking provider sends SMS only' };
    const form = new URLSearchParams({ username: this.values.AFRICASTALKING_USERNAME, to: message.to, message: message.text });
    if (this.values.AFRICASTALKING_SENDER_ID !== undefined) form.set('from', this.values.AFRICASTALKING_SENDER_ID);
    const headers = { apiKey: this.values.AFRICASTALKING_API_KEY, 'content-type': 'application/x-www-form-urlencoded' };
    return this.api.post({ path: this.messagingPath, headers, body: form.toString() }, signal, (answer) => this.decide(answer));
  }

  /** Reads a delivery report: a form with id, status and, for Rejected or Failed, failureReason. */
  verifyCallback(request: CallbackRequest): CallbackResult {
    if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: "Africa's Talking delivery reports are POSTs" };
    if (!hasPathSecret(request.url, this.values.AFRICASTALKING_CALLBACK_SECRET)) {
      return { kind: 'forbidden', reason: 'the callback URL does not end with AFRICASTALKING_CALLBACK_SECRET' };
    }
    if (mediaType(request.headers['content-type']) !== 'application/x-www-form-urlencoded') {
      return { kind: 'forbidden', reason: "Africa's Talking delivery reports are form-encoded" };
    }
    const form = new URLSearchParams(request.rawBody.toString('utf8'));
    const messageId = nonEmptyString(form.get('id'));
    const status = nonEmptyString(form.get('status'));
    if (messageId === null || status === null) {
      return { kind: 'forbidden', reason: "not an Africa's Talking delivery report (no id or status)" };
    }
    const ours = receiptStatuses[status];
    if (ours === undefined) return { kind: 'receipts', receipts: [] };
    const failureReason = nonEmptyString(form.get('failureReason'));
    const detail = failureReason !== null ? `${status} (${failureReason})` : status;
    return { kind: 'receipts', receipts: [{ messageId, status: ours, detail, at: null }] };
  }

  /**
   * Maps one answer to a result. The recipient's statusCode decides when there is one, whatever the HTTP status
   * (a DoNotDisturbRejection comes as HTTP 409 with the usual body); otherwise the HTTP status does. Never includes
   * Africa's Talking's texts: they may echo the number.
   */
  private decide({ status, retryAfter, body }: HttpAnswer): SendResult {
    const data = asObject(jsonObject(body)?.SMSMessageData);
    const recipient = Array.isArray(data?.Recipients) ? asObject(data.Recipients[0]) : null;
    const code = statusCodeOf(recipient?.statusCode);
    if (recipient !== null && code !== null) return this.decideRecipient(code, recipient, status, retryAfter);
    const what = `HTTP ${status}`;
    if (status === 429 || status >= 500) {
      const reason = status === 429 ? `Africa's Talking: throttled (${what})` : `Africa's Talking: server error (${what})`;
      return transient(reason, retryAfter);
    }
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status }, "Africa's Talking refused the credentials");
      return {
        kind: 'permanent',
        reason: `Africa's Talking refused the credentials (AFRICASTALKING_USERNAME / AFRICASTALKING_API_KEY; ${what})`,
      };
    }
    // An answer without recipients names what went wrong in SMSMessageData.Message (e.g. InvalidSenderId).
    const summary = nonEmptyString(data?.Message);
    const named = summary !== null && /^[A-Za-z]{1,40}$/.test(summary) ? `: ${summary}` : '';
    if (status >= 200 && status < 300) return { kind: 'permanent', reason: `Africa's Talking sent to no recipient${named} (${what})` };
    return { kind: 'permanent', reason: `Africa's Talking refused the message${named} (${what})` };
  }

  private decideRecipient(
    code: number,
    recipient: Readonly<Record<string, unknown>>,
    status: number,
    retryAfter: string | string[] | undefined,
  ): SendResult {
    const known = recipientCodes[code];
    const what = `statusCode ${code} ${known?.name ?? 'unknown'}, HTTP ${status}`;
    const kind = known?.kind ?? (code >= 500 ? 'transient' : code >= 400 ? 'permanent' : 'accepted');
    if (kind === 'accepted') {
      const messageId = nonEmptyString(recipient.messageId);
      if (messageId !== null && messageId !== 'None') {
        const price = priceOf(recipient.cost);
        return price === null ? { kind: 'accepted', messageId } : { kind: 'accepted', messageId, price };
      }
      // It may well have been taken: a retry through Africa's Talking could send the code twice.
      return { kind: 'permanent', reason: `Africa's Talking accepted the message without a message id (${what})` };
    }
    if (kind === 'transient') {
      const reason = `Africa's Talking: gateway error (${what})`;
      return transient(reason, retryAfter);
    }
    if (code === 405 || code === 401) {
      this.context.logger.warn({ provider: this.name, statusCode: code }, "Africa's Talking refused to send for the account's sake");
    }
    return { kind: 'permanent', reason: `Africa's Talking refused the message (${what})` };
  }
}

/** A recipient's statusCode, as a number or a numeric string. */
function statusCodeOf(value: unknown): number | null {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\d{3}$/.test(value)) return Number(value);
  return null;
}

/**
 * A recipient's `cost` ("KES 0.8000": the currency, a space, the amount) as a price; null when it is not that shape
 * (a refused recipient's cost is a bare "0"), so that the ledger falls back to the imported price, never to a guess.
 */
function priceOf(cost: unknown): Money | null {
  if (typeof cost !== 'string') return null;
  const [currency, written, ...rest] = cost.trim().split(/\s+/);
  if (currency === undefined || written === undefined || rest.length > 0 || !isCurrency(currency)) return null;
  const amount = parseAmount(written);
  return amount === null ? null : { currency, amount };
}
