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
import { callbackUrlWithSecret, hasPathSecret, parsePathSecret } from './callback-path-secret.js';
import {
  asObject,
  e164Digits,
  HttpApi,
  jsonObject,
  mediaType,
  nonEmptyString,
  parseBaseUrl,
  parseHeaderCredential,
  transient,
  type HttpAnswer,
} from './http-provider.js';

/**
 * Infobip SMS API v3 (`POST /sms/3/messages`), with delivery reports on a URL given per message.
 *
 * Infobip does not sign delivery reports sent to a per-message `webhooks.delivery.url`. (Its Subscriptions
 * Management can attach Basic, HMAC or OAuth credentials to a notification profile, but that is set up per
 * account outside the send, and its HMAC scheme is not publicly specified.) So each message names
 * `{PUBLIC_BASE_URL}/callbacks/infobip/{INFOBIP_CALLBACK_SECRET}` as its delivery URL, and a report is believed
 * only when it comes to that URL: the secret never leaves this service except towards Infobip, over HTTPS.
 */

const settings = {
  INFOBIP_BASE_URL: {
    doc: "Your account's own API base URL, as the Infobip portal shows it, with https:// (e.g. https://xxxxx.api.infobip.com).",
    default: undefined,
    required: true as const,
    parse: parseBaseUrl('https://xxxxx.api.infobip.com'),
  },
  INFOBIP_API_KEY: {
    doc: 'Infobip API key (sent as `Authorization: App <key>`); it needs the sms:message:send scope.',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseHeaderCredential('Infobip API key'),
  },
  INFOBIP_CALLBACK_SECRET: {
    doc:
      'A random secret of at least 32 letters, digits, "-" or "_" (e.g. `openssl rand -hex 32`). Each message asks Infobip to ' +
      'report its delivery to PUBLIC_BASE_URL/callbacks/infobip/<this secret>; Infobip does not sign its reports, so only ' +
      'reports to that URL are believed.',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parsePathSecret,
  },
} satisfies ProviderSettings;

/** Infobip SMS (API v3), with delivery reports authenticated by a secret in their URL. */
export const infobipSms: ProviderModule<typeof settings> = {
  name: 'infobip',
  channels: ['sms'],
  settings,
  callbacks: true,
  create: (values, context) => new InfobipSmsProvider(values, context),
};

/** Status groups of a message (the answer to a send and a delivery report) -> our receipt status. */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  ACCEPTED: 'SENT',
  PENDING: 'SENT',
  DELIVERED: 'DELIVERED',
  UNDELIVERABLE: 'UNDELIVERED',
  EXPIRED: 'UNDELIVERED',
  REJECTED: 'UNDELIVERED',
};

/** Status groups that, in the answer to a send, mean Infobip will not deliver it. */
const refusedGroups: ReadonlySet<string> = new Set(['REJECTED', 'UNDELIVERABLE', 'EXPIRED']);

class InfobipSmsProvider implements Provider {
  readonly name = 'infobip';
  readonly channels = ['sms'] as const;
  private readonly api: HttpApi;
  private readonly messagesPath: string;
  private readonly authorization: string;
  private readonly deliveryUrl: string | null;

  constructor(
    private readonly values: SettingValues<typeof settings>,
    private readonly context: ProviderContext,
  ) {
    this.api = new HttpApi(values.INFOBIP_BASE_URL.origin, 'Infobip');
    this.messagesPath = `${values.INFOBIP_BASE_URL.pathPrefix}/sms/3/messages`;
    this.authorization = `App ${values.INFOBIP_API_KEY}`;
    this.deliveryUrl = context.callbackUrl === null ? null : callbackUrlWithSecret(context.callbackUrl, values.INFOBIP_CALLBACK_SECRET);
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return { kind: 'permanent', reason: 'the infobip provider sends SMS only' };
    const body = {
      messages: [
        {
          sender: e164Digits(message.from),
          // Our send id as Infobip's message id: the key its delivery reports come back under.
          destinations: [{ to: e164Digits(message.to), messageId: message.sendId }],
          content: { text: message.text },
          ...(this.deliveryUrl === null
            ? {}
            : { webhooks: { delivery: { url: this.deliveryUrl }, contentType: 'application/json' } }),
        },
      ],
    };
    const headers = { authorization: this.authorization, 'content-type': 'application/json' };
    return this.api.post({ path: this.messagesPath, headers, body: JSON.stringify(body) }, signal, (answer) => this.decide(answer));
  }

  /** Reads a delivery report: `{ results: [{ messageId, status: { groupName, name }, error?, doneAt? }] }`. */
  verifyCallback(request: CallbackRequest): CallbackResult {
    if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'Infobip delivery reports are POSTs' };
    if (!hasPathSecret(request.url, this.values.INFOBIP_CALLBACK_SECRET)) {
      return { kind: 'forbidden', reason: 'the callback URL does not end with INFOBIP_CALLBACK_SECRET' };
    }
    if (mediaType(request.headers['content-type']) !== 'application/json') {
      return { kind: 'forbidden', reason: 'Infobip delivery reports are asked for as application/json' };
    }
    const results = jsonObject(request.rawBody)?.results;
    if (!Array.isArray(results)) return { kind: 'forbidden', reason: 'not an Infobip delivery report (no results array)' };
    const receipts: DeliveryReceipt[] = [];
    for (const item of results) {
      const result = asObject(item);
      const messageId = nonEmptyString(result?.messageId);
      const status = asObject(result?.status);
      const groupName = nonEmptyString(status?.groupName);
      if (result === null || messageId === null || groupName === null) {
        return { kind: 'forbidden', reason: 'not an Infobip delivery report (a result without messageId or status.groupName)' };
      }
      const ours = receiptStatuses[groupName];
      if (ours === undefined) continue;
      receipts.push({ messageId, status: ours, detail: detailOf(groupName, status, asObject(result.error)), at: dateOf(result.doneAt) });
    }
    return { kind: 'receipts', receipts };
  }

  /** Maps one answer of `POST /sms/3/messages` to a result. Never includes Infobip's texts: they may echo the number. */
  private decide({ status, retryAfter, body }: HttpAnswer): SendResult {
    const json = jsonObject(body);
    if (status === 200 || status === 201) {
      const first = Array.isArray(json?.messages) ? asObject(json.messages[0]) : null;
      const messageId = nonEmptyString(first?.messageId);
      const answerStatus = asObject(first?.status);
      const group = nonEmptyString(answerStatus?.groupName);
      const name = nonEmptyString(answerStatus?.name);
      if (group !== null && refusedGroups.has(group)) {
        return { kind: 'permanent', reason: `Infobip refused the message: ${name ?? group} (status group ${group})` };
      }
      if (messageId !== null) return { kind: 'accepted', messageId };
      // It may well have been taken: a retry through Infobip could send the code twice.
      return { kind: 'permanent', reason: `Infobip: HTTP ${status} without a message id` };
    }
    const what = `HTTP ${status}${errorCodeOf(json)}`;
    if (status === 429 || status >= 500) {
      const reason = status === 429 ? `Infobip: throttled (${what})` : `Infobip: server error (${what})`;
      return transient(reason, retryAfter);
    }
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status }, 'Infobip refused the credentials');
      return { kind: 'permanent', reason: `Infobip refused the credentials (INFOBIP_API_KEY, or its scopes; ${what})` };
    }
    if (status >= 400) {
      const properties = violatedProperties(json);
      return { kind: 'permanent', reason: `Infobip refused the message (${what}${properties})` };
    }
    return { kind: 'permanent', reason: `Infobip: unexpected answer (${what})` };
  }
}

/** `, E400` from an API error (`errorCode`) or an older service exception (`requestError.serviceException.messageId`). */
function errorCodeOf(json: Readonly<Record<string, unknown>> | null): string {
  const exception = asObject(asObject(json?.requestError)?.serviceException);
  const code = nonEmptyString(json?.errorCode) ?? nonEmptyString(exception?.messageId);
  return code !== null && /^[A-Za-z0-9_]{1,40}$/.test(code) ? `, ${code}` : '';
}

/** `; invalid: messages[0].destinations[0].to` from an API error's violations: property paths only, never values. */
function violatedProperties(json: Readonly<Record<string, unknown>> | null): string {
  const violations = Array.isArray(json?.violations) ? json.violations : [];
  const properties = violations
    .map((v) => nonEmptyString(asObject(v)?.property))
    .filter((p): p is string => p !== null && /^[A-Za-z0-9_.[\]]{1,100}$/.test(p))
    .slice(0, 5);
  return properties.length > 0 ? `; invalid: ${properties.join(', ')}` : '';
}

/** `UNDELIVERABLE_NOT_DELIVERED (EC_ABSENT_SUBSCRIBER)`: the status and, when there was one, the error. */
function detailOf(group: string, status: Readonly<Record<string, unknown>> | null, error: Readonly<Record<string, unknown>> | null): string {
  const statusName = nonEmptyString(status?.name) ?? group;
  const errorName = nonEmptyString(error?.name);
  return errorName !== null && errorName !== 'NO_ERROR' ? `${statusName} (${errorName})` : statusName;
}

/** `doneAt` (yyyy-MM-dd'T'HH:mm:ss.SSSZ, e.g. 2019-11-09T16:00:00.000+0100) as a date; null when absent or unreadable. */
function dateOf(value: unknown): Date | null {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:?\d{2})$/.test(value)) return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
}
