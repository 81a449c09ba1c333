/**
 * The `http` provider: the operator's own SMS and call gateway, reached by one signed JSON POST per message or call.
 *
 * ## The request
 * `POST HTTP_GATEWAY_URL`, `content-type: application/json`, one of:
 * ```json
 * { "id": "<sendId>", "verificationId": "<id>", "channel": "sms", "to": "+2348012345678",
 *   "from": "+2348000000000", "text": "Your code is 482913", "callbackUrl": "https://otp.example.org/callbacks/http" }
 * { "id": "<sendId>", "verificationId": "<id>", "channel": "call", "to": "+2348012345678",
 *   "callerId": "+2348000482913", "callbackUrl": "https://otp.example.org/callbacks/http" }
 * ```
 * `from` is an E.164 number or an alphanumeric sender id; a call is dropped as soon as the phone rings, and its
 * caller id's last digits are the code. The request is signed the Standard Webhooks way with HTTP_GATEWAY_SECRET
 * (headers `webhook-id` = `id`, `webhook-timestamp`, `webhook-signature`), so the gateway checks it with any
 * Standard Webhooks library, and carries `Idempotency-Key: <id>`: every retry of one send has the same `id`, so a
 * gateway that already took it answers as it did the first time and sends nothing again.
 *
 * ## The answer
 * - `2xx` with `{ "messageId": "<gateway's id>" }`: accepted; receipts come back under that id.
 * - `2xx` without a usable messageId (none, not 1-200 printable characters, not JSON, longer than 64 KiB):
 *   accepted under the request's `id`. The gateway has taken the message, so calling it a failure would send the
 *   code a second time (a retry, or the next provider); and the gateway knows `id`, so its receipts can use it.
 * - `400`, `404`, `410`, `422` and any other 4xx not named below: permanent (the next provider at once), with the
 *   answer's `{ "error": "<why>" }` as the reason (control characters removed, at most 200 characters).
 * - `401`, `403`: permanent: the gateway refused the signature; check HTTP_GATEWAY_SECRET on both sides.
 * - `408`, `409` (still working on an earlier attempt with this Idempotency-Key), `429`, `5xx`, no answer before the
 *   service's time-out, a refused or broken connection, an answer cut off before its end: transient, retried
 *   later with the same `id`; `Retry-After` (seconds or an HTTP date) is passed on.
 * - Anything else (a redirect: redirects are not followed): permanent.
 * At most 64 KiB of an answer is read.
 *
 * ## Receipts
 * The gateway POSTs to `callbackUrl` one receipt or an array of them, signed the Standard Webhooks way with the
 * same secret (a fresh `webhook-timestamp`, within five minutes of the service's clock):
 * ```json
 * { "messageId": "<gateway's id, or id>", "status": "SENT" | "DELIVERED" | "UNDELIVERED",
 *   "detail": "<optional: its own status or error, for operators>", "at": "<optional: ISO-8601 with a time zone>" }
 * ```
 * DELIVERED: the SMS reached the phone, or the call rang. UNDELIVERED: the network gave up (the next provider is
 * tried while the verification is pending). A missing, wrong or stale signature, or a body not of this shape, is
 * answered 403 and changes nothing; a repeated receipt changes nothing twice.
 */
import type {
  CallbackRequest,
  CallbackResult,
  DeliveryReceipt,
  Outgoing,
  OutgoingCall,
  OutgoingSms,
  Provider,
  ProviderContext,
  ProviderModule,
  ProviderSettings,
  SendResult,
} from '../channels/provider-port.js';
import { systemClock } from '../domain/ports.js';
import { signedHeaders, signingKey } from '../webhooks/signer.js';
import { checkSignature } from '../webhooks/verifier.js';
import { asObject, HttpApi, isPrintableId, jsonObject, parseHttpUrl, sanitized, transient, type HttpAnswer } from './http-provider.js';

/** Where sends go: an origin for the connection pool and the path (with any query) to POST to. */
export interface GatewayUrl {
  readonly origin: string;
  readonly path: string;
}

const settings = {
  HTTP_GATEWAY_URL: {
    doc: "The operator's own SMS/call gateway: an http(s) URL that takes one signed JSON POST per message or call. No credentials in it: every request is signed with HTTP_GATEWAY_SECRET.",
    default: undefined,
    required: true as const,
    parse: parseGatewayUrl,
  },
  HTTP_GATEWAY_SECRET: {
    doc: 'Standard Webhooks secret shared with the gateway: signs every request to it and authenticates its receipts. whsec_ followed by the base64 of at least 24 random bytes; make one with: echo "whsec_$(openssl rand -base64 32)"',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseWebhookSecret,
  },
} satisfies ProviderSettings;

/** The operator's own gateway, for SMS and dropped calls, with signed requests and signed receipts. */
export const httpGateway: ProviderModule<typeof settings> = {
  name: 'http',
  channels: ['sms', 'call'],
  settings,
  callbacks: true,
  create: (values, context) => new HttpGatewayProvider(values.HTTP_GATEWAY_URL, values.HTTP_GATEWAY_SECRET, context),
};

/** The most receipts one callback may carry. */
const maxReceipts = 1000;

const receiptStatuses: ReadonlySet<string> = new Set(['SENT', 'DELIVERED', 'UNDELIVERED']);

class HttpGatewayProvider implements Provider {
  readonly name = 'http';
  readonly channels = ['sms', 'call'] as const;
  private readonly api: HttpApi;
  private readonly callbackUrl: string;

  constructor(
    private readonly url: GatewayUrl,
    private readonly secret: string,
    private readonly context: ProviderContext,
  ) {
    // The start refuses a provider with callbacks while PUBLIC_BASE_URL is unset: this is a wiring bug.
    if (context.callbackUrl === null) throw new Error('http: PUBLIC_BASE_URL must be set (receipts come back to it)');
    this.callbackUrl = context.callbackUrl;
    this.api = new HttpApi(url.origin, 'gateway');
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel === 'voice' || message.channel === 'whatsapp' || message.channel === 'telegram' || message.channel === 'silent') return { kind: 'permanent', reason: 'the http gateway sends SMS and dropped calls only' };
    const body = JSON.stringify(requestBody(message, this.callbackUrl));
    const headers = {
      'content-type': 'application/json',
      'idempotency-key': message.sendId,
      ...signedHeaders([this.secret], message.sendId, systemClock.now(), body),
    };
    return this.api.post({ path: this.url.path, headers, body }, signal, (answer) => this.decide(message, answer));
  }

  verifyCallback(request: CallbackRequest): CallbackResult {
    if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'gateway receipts are POSTs' };
    const check = checkSignature([this.secret], request.headers, request.rawBody, systemClock.now());
    if (!check.ok) return { kind: 'forbidden', reason: check.reason };
    const receipts = parseReceipts(request.rawBody);
    if (typeof receipts === 'string') return { kind: 'forbidden', reason: `malformed receipt: ${receipts}` };
    return { kind: 'receipts', receipts };
  }

  /** Maps one answer to a result (the contract in this file's first comment). */
  private decide(message: OutgoingSms | OutgoingCall, { status, retryAfter, body }: HttpAnswer): SendResult {
    const json = jsonObject(body);
    if (status >= 200 && status < 300) {
      if (isPrintableId(json?.messageId)) return { kind: 'accepted', messageId: json.messageId };
      if (json?.messageId !== undefined) {
        this.context.logger.warn({ provider: this.name, status }, 'gateway answered an unusable messageId; its receipts must use the request id');
      }
      return { kind: 'accepted', messageId: message.sendId };
    }
    const error = typeof json?.error === 'string' ? sanitized(json.error, hiddenIn(message)) : null;
    const what = `HTTP ${status}${error !== null ? `: ${error}` : ''}`;
    if (status === 408 || status === 409 || status === 429 || status >= 500) {
      const reason = `gateway: ${status >= 500 ? 'server error' : 'try again later'} (${what})`;
      return transient(reason, retryAfter);
    }
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: this.name, status }, 'the gateway refused our signature: check HTTP_GATEWAY_SECRET');
      return { kind: 'permanent', reason: `gateway refused the signature (${what}): check HTTP_GATEWAY_SECRET` };
    }
    if (status >= 400 && status < 500) return { kind: 'permanent', reason: `gateway refused the message (${what})` };
    return { kind: 'permanent', reason: `gateway: unexpected answer (${what}; redirects are not followed)` };
  }
}

/** The JSON body of one send. */
function requestBody(message: OutgoingSms | OutgoingCall, callbackUrl: string): Record<string, string> {
  const common = { id: message.sendId, verificationId: message.verificationId, channel: message.channel, to: message.to };
  return message.channel === 'call'
    ? { ...common, callerId: message.callerId, callbackUrl }
    : { ...common, from: message.from, text: message.text, callbackUrl };
}

/** What must never reach a log through the gateway's own words: the code, the text, the caller id that spells it. */
function hiddenIn(message: OutgoingSms | OutgoingCall): string[] {
  if (message.channel === 'sms') return [message.text, message.code];
  return [message.callerId, message.callerId.replace(/^\+/, '')];
}

/** One receipt or an array of them, or what is wrong with the body. */
function parseReceipts(rawBody: Buffer): DeliveryReceipt[] | string {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return 'the body is not JSON';
  }
  const items: unknown[] = Array.isArray(value) ? value : [value];
  if (items.length > maxReceipts) return `more than ${maxReceipts} receipts in one callback`;
  const receipts: DeliveryReceipt[] = [];
  for (const [index, item] of items.entries()) {
    const receipt = parseReceipt(item);
    if (typeof receipt === 'string') return Array.isArray(value) ? `[${index}]: ${receipt}` : receipt;
    receipts.push(receipt);
  }
  return receipts;
}

function parseReceipt(item: unknown): DeliveryReceipt | string {
  const record = asObject(item);
  if (record === null) return 'not an object';
  const { messageId, status, detail, at } = record;
  if (!isPrintableId(messageId)) return 'messageId must be a string of 1 to 200 printable characters';
  if (status !== 'SENT' && status !== 'DELIVERED' && status !== 'UNDELIVERED') {
    return `status must be one of ${[...receiptStatuses].join(', ')}`;
  }
  if (detail !== undefined && detail !== null && typeof detail !== 'string') return 'detail must be a string';
  const when = at === undefined || at === null ? null : isoDateTime(at);
  if (when === undefined) return 'at must be an ISO-8601 date-time with a time zone';
  return { messageId, status, detail: typeof detail === 'string' ? sanitized(detail) : null, at: when };
}

/** An ISO-8601 / RFC 3339 date-time with its time zone; undefined when it is not one. */
function isoDateTime(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/i.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** Unlike a provider's base URL, the gateway's is the very URL posted to, so it may carry a query. */
function parseGatewayUrl(raw: string): GatewayUrl {
  const url = parseHttpUrl(raw, 'https://gateway.example.org/otp');
  if (url.hash) throw new Error('must not have a fragment');
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
}

/** A Standard Webhooks secret: whsec_ and the base64 of 24 or more bytes. Returned as written (signer.ts reads it). */
function parseWebhookSecret(raw: string): string {
  const how = 'make one with: echo "whsec_$(openssl rand -base64 32)"';
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(raw);
  const encoded = match?.[1];
  if (encoded === undefined || encoded.length % 4 !== 0) throw new Error(`must be whsec_ followed by base64; ${how}`);
  if (signingKey(raw).length < 24) throw new Error(`must hold at least 24 random bytes; ${how}`);
  return raw;
}
