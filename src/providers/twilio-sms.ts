import { Pool } from 'undici';
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
import { systemClock } from '../domain/ports.js';
import { retryAfterMs } from '../webhooks/retry-policy.js';
import { isTwilioSignatureValid } from './twilio-signature.js';

/** Where the Messages API is: an origin for the connection pool and a path prefix (empty for Twilio itself). */
export interface TwilioBaseUrl {
  readonly origin: string;
  readonly pathPrefix: string;
}

const settings = {
  TWILIO_ACCOUNT_SID: {
    doc: 'Twilio account SID (AC followed by 32 hex digits); the user name of the API calls and part of their path.',
    default: undefined,
    required: true,
    parse: (raw: string): string => matching(raw, /^AC[0-9a-f]{32}$/i, 'an account SID: AC followed by 32 hex digits'),
  },
  TWILIO_AUTH_TOKEN: {
    doc: "Twilio auth token: the password of the API calls and the key Twilio's callbacks are signed with.",
    default: undefined,
    required: true,
    secret: true,
    parse: (raw: string): string => {
      if (raw.trim() === '' || raw !== raw.trim()) throw new Error('must be the auth token, without spaces around it');
      return raw;
    },
  },
  TWILIO_BASE_URL: {
    doc: "Twilio's REST API; set it to a proxy or a local stand-in.",
    default: 'https://api.twilio.com',
    required: false,
    parse: parseBaseUrl,
  },
  TWILIO_MESSAGING_SERVICE_SID: {
    doc: 'Optional Messaging Service SID (MG...): when set, messages go out through it (MessagingServiceSid) instead of From.',
    default: undefined,
    required: false,
    parse: (raw: string): string => matching(raw, /^MG[0-9a-f]{32}$/i, 'a Messaging Service SID: MG followed by 32 hex digits'),
  },
} satisfies ProviderSettings;

/** The settings a provider runs with, the required ones known to be set. */
interface TwilioConfig {
  readonly accountSid: string;
  readonly authToken: string;
  readonly baseUrl: TwilioBaseUrl;
  readonly messagingServiceSid: string | undefined;
}

/** Twilio Programmable Messaging (SMS), with signed delivery callbacks. */
export const twilioSms: ProviderModule<typeof settings> = {
  name: 'twilio',
  channels: ['sms'],
  settings,
  callbacks: true,
  create: (values, context) => new TwilioSmsProvider(configOf(values), context),
};

/** The most of an answer's body read (for its JSON `sid` or `code`); the rest is dropped. */
const maxAnswerBytes = 64 * 1024;

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
  /** One keep-alive pool to the API's origin for this provider's whole life; a burst queues on its 16 sockets. */
  private readonly pool: Pool;
  private readonly messagesPath: string;
  private readonly authorization: string;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly config: TwilioConfig,
    private readonly context: ProviderContext,
  ) {
    this.pool = new Pool(config.baseUrl.origin, { connections: 16 });
    this.messagesPath = `${config.baseUrl.pathPrefix}/2010-04-01/Accounts/${config.accountSid}/Messages.json`;
    this.authorization = `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`).toString('base64')}`;
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  /** Waits for sends in flight, then closes the pool's connections; safe to call more than once. */
  async stop(): Promise<void> {
    this.closing ??= this.pool.close();
    await this.closing;
  }

  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'sms') return { kind: 'permanent', reason: 'the twilio provider sends SMS only' };
    const form = new URLSearchParams({ To: message.to });
    if (this.config.messagingServiceSid !== undefined) {
      form.set('MessagingServiceSid', this.config.messagingServiceSid);
    } else {
      form.set('From', message.from);
    }
    form.set('Body', message.text);
    // Twilio signs its callbacks with the auth token, so the URL carries nothing secret.
    if (this.context.callbackUrl !== null) form.set('StatusCallback', this.context.callbackUrl);
    try {
      const answer = await this.pool.request({
        method: 'POST',
        path: this.messagesPath,
        headers: {
          authorization: this.authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'user-agent': 'otp-service',
        },
        body: form.toString(),
        signal,
      });
      const body = await readBounded(answer.body, maxAnswerBytes);
      return this.decide(answer.statusCode, answer.headers['retry-after'], body);
    } catch (err) {
      if (signal.aborted) return { kind: 'transient', reason: 'Twilio: no answer before the time-out' };
      return { kind: 'transient', reason: `Twilio: ${describeNetworkError(err)}` };
    }
  }

  verifyCallback(request: CallbackRequest): CallbackResult {
    if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'Twilio callbacks are POSTs' };
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (contentType !== 'application/x-www-form-urlencoded') {
      // A JSON body would be covered only by a bodySHA256 in the URL, which our callback URL never has.
      return { kind: 'forbidden', reason: 'Twilio status callbacks are form-encoded' };
    }
    const signature = request.headers['x-twilio-signature'];
    if (signature === undefined || signature === '') return { kind: 'forbidden', reason: 'no X-Twilio-Signature' };
    const form = new URLSearchParams(request.rawBody.toString('utf8'));
    if (!isTwilioSignatureValid(this.config.authToken, signature, request.url, form)) {
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
  private decide(status: number, retryAfter: string | string[] | undefined, body: Buffer | null): SendResult {
    const json = parseJson(body);
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
      const ms = typeof retryAfter === 'string' ? retryAfterMs(retryAfter, systemClock.now()) : null;
      return ms === null ? { kind: 'transient', reason } : { kind: 'transient', reason, retryAfterSeconds: Math.ceil(ms / 1000) };
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

/**
 * The port types a required setting without a default as possibly undefined; the start refuses to go on
 * without it, so missing here is a wiring bug.
 */
function configOf(values: SettingValues<typeof settings>): TwilioConfig {
  const { TWILIO_ACCOUNT_SID: accountSid, TWILIO_AUTH_TOKEN: authToken } = values;
  if (accountSid === undefined || authToken === undefined) {
    throw new Error('twilio: TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN must be set');
  }
  return { accountSid, authToken, baseUrl: values.TWILIO_BASE_URL, messagingServiceSid: values.TWILIO_MESSAGING_SERVICE_SID };
}

function matching(raw: string, pattern: RegExp, what: string): string {
  if (!pattern.test(raw)) throw new Error(`must be ${what}`);
  return raw;
}

function parseBaseUrl(raw: string): TwilioBaseUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('must be an http(s) URL, e.g. https://api.twilio.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http(s) URL');
  if (url.username || url.password) throw new Error('must not contain credentials (they come from TWILIO_AUTH_TOKEN)');
  if (url.search || url.hash) throw new Error('must not have a query or fragment');
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

/** Reads at most `limit` bytes of a body and drops the rest; null when it was longer. */
async function readBounded(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body) {
      length += chunk.length;
      if (length > limit) return null;
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  } finally {
    body.destroy();
  }
}

/** The fields read from an answer's JSON: `sid` of a message, `code` of an error. */
function parseJson(body: Buffer | null): { readonly sid?: unknown; readonly code?: unknown } | null {
  if (body === null || body.length === 0) return null;
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null;
  }
}

/** A short description of a failed request (refused, reset, closed mid-answer), with nothing of what was sent. */
function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return 'request failed';
  const code = 'code' in err && typeof err.code === 'string' ? `${err.code} ` : '';
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${code}${err.message}${cause}`.slice(0, 300);
}
