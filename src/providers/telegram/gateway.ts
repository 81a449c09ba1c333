import type {
  CallbackRequest,
  CallbackResult,
  Outgoing,
  OutgoingTelegram,
  Provider,
  ProviderContext,
  ProviderModule,
  ProviderSettings,
  SendResult,
  SettingValues,
} from '../../channels/provider-port.js';
import { parseAmount, type Money } from '../../domain/money.js';
import { systemClock, type Clock } from '../../domain/ports.js';
import { asObject, HttpApi, jsonObject, parseBaseUrl, parseHeaderCredential, sanitized, transient, type HttpAnswer } from '../http-provider.js';
import { gatewayReportReceipts } from './gateway-report.js';

export const telegramSettings = {
  TELEGRAM_GATEWAY_TOKEN: {
    doc: 'The API token of the Telegram Gateway account (gateway.telegram.org, Account > API): sent as `Authorization: Bearer`, and the key (its SHA-256) of the signature on delivery reports.',
    default: undefined,
    required: true as const,
    secret: true,
    parse: parseHeaderCredential('Telegram Gateway API token'),
  },
  TELEGRAM_BASE_URL: {
    doc: 'The Telegram Gateway API; set it to a proxy or a local stand-in.',
    default: 'https://gatewayapi.telegram.org',
    required: false,
    parse: parseBaseUrl('https://gatewayapi.telegram.org'),
  },
} satisfies ProviderSettings;

export type TelegramSettings = SettingValues<typeof telegramSettings>;

/** The Telegram Gateway API: codes of the service's own, delivered by Telegram's Verification Codes account. */
export const telegramGateway: ProviderModule<typeof telegramSettings> = {
  name: 'telegram',
  channels: ['telegram'],
  settings: telegramSettings,
  callbacks: true,
  create: (values, context) => new TelegramGatewayProvider(values, context),
};

/** The Gateway's prices and `request_cost` are in US dollars. */
const gatewayCurrency = 'USD';

/** Ability checks kept for retries at most: far more sends than are ever retrying at once. */
const maxRememberedChecks = 10_000;

/** The `ttl` range sendVerificationMessage takes, in seconds. */
export const ttlRange = { min: 30, max: 3600 } as const;

/** The message's time to live: what is left of the code's lifetime, within the range the Gateway takes. */
export function messageTtl(expiresAt: Date, now: Date): number {
  const left = Math.floor((expiresAt.getTime() - now.getTime()) / 1000);
  return Math.min(ttlRange.max, Math.max(ttlRange.min, left));
}

/** What one Gateway method answered: its `result`, or what the send comes to. */
type GatewayAnswer = { readonly kind: 'ok'; readonly result: Readonly<Record<string, unknown>> } | SendResult;

/**
 * A Gateway answer (`{ ok, result }` or `{ ok: false, error }`): throttling and server errors may pass; any error
 * the Gateway names (an unreachable number, a bad token, an empty balance) does not through this provider.
 */
function readAnswer(answer: HttpAnswer, token: string): GatewayAnswer {
  const body = jsonObject(answer.body);
  if (answer.status === 429 || answer.status >= 500) return transient(`Telegram Gateway: HTTP ${answer.status}`, answer.retryAfter);
  // revokeVerificationMessage's result is a Boolean, the other methods' a RequestStatus.
  if (body?.ok === true) return { kind: 'ok', result: asObject(body.result) ?? {} };
  const error = typeof body?.error === 'string' ? sanitized(body.error, [token], 100) : null;
  if (error === null) return { kind: 'transient', reason: `Telegram Gateway: HTTP ${answer.status} without a Gateway answer` };
  if (/^FLOOD_WAIT/i.test(error)) return transient(`Telegram Gateway: ${error}`, answer.retryAfter);
  return { kind: 'permanent', reason: `Telegram Gateway: ${error}` };
}

/** A RequestStatus's `request_cost` as money; absent or unreadable: not said. */
function costOf(result: Readonly<Record<string, unknown>>): Money | null {
  const cost = result.request_cost;
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) return null;
  const amount = parseAmount(cost.toFixed(10));
  return amount === null ? null : { amount, currency: gatewayCurrency };
}

class TelegramGatewayProvider implements Provider {
  readonly name = 'telegram';
  readonly channels = ['telegram'] as const;
  private readonly api: HttpApi;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly clock: Clock;
  /**
   * The ability check of each send whose message has not gone yet (our sendId -> its request_id), so that a retry
   * after a transient failure sends with it rather than paying for a second check. Bounded: the oldest goes first.
   */
  private readonly checks = new Map<string, string>();

  constructor(
    private readonly values: TelegramSettings,
    private readonly context: ProviderContext,
  ) {
    this.api = new HttpApi(values.TELEGRAM_BASE_URL.origin, 'Telegram Gateway');
    this.headers = { authorization: `Bearer ${values.TELEGRAM_GATEWAY_TOKEN}`, 'content-type': 'application/json' };
    this.clock = context.clock ?? systemClock;
  }

  /** Nothing to open: connections are made on the first send. */
  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.api.close();
  }

  /**
   * checkSendAbility, then sendVerificationMessage with its request_id (so the message is not charged twice). A
   * number the Gateway cannot reach is refused by the check: a permanent failure, so the workflow's next step goes.
   */
  async send(message: Outgoing, signal: AbortSignal): Promise<SendResult> {
    if (message.channel !== 'telegram') return { kind: 'permanent', reason: 'the telegram provider sends Telegram verification messages only' };
    if (!/^\d{4,8}$/.test(message.code)) return { kind: 'permanent', reason: 'the Telegram Gateway takes codes of 4 to 8 digits (OTP_LENGTH)' };
    const earlier = this.checks.get(message.sendId);
    const check = earlier === undefined ? await this.call('checkSendAbility', { phone_number: message.to }, signal) : null;
    if (check !== null && check.kind !== 'ok') return check;
    const checked = earlier ?? check?.result.request_id;
    if (typeof checked !== 'string' || checked === '') return { kind: 'transient', reason: 'Telegram Gateway: checkSendAbility answered without a request_id' };
    this.remember(message.sendId, checked);
    const sent = await this.call('sendVerificationMessage', this.sendParams(message, checked), signal);
    // Kept for a retry only while retrying may help.
    if (sent.kind !== 'transient') this.checks.delete(message.sendId);
    if (sent.kind !== 'ok') return sent;
    const id = sent.result.request_id;
    if (typeof id !== 'string' || id === '') return { kind: 'transient', reason: 'Telegram Gateway: sendVerificationMessage answered without a request_id' };
    // The ability check is the charge; the send made with its request_id reports the same request's cost.
    const price = costOf(sent.result) ?? (check?.kind === 'ok' ? costOf(check.result) : null);
    return { kind: 'accepted', messageId: id, ...(price && { price }) };
  }

  private remember(sendId: string, requestId: string): void {
    this.checks.delete(sendId);
    this.checks.set(sendId, requestId);
    const oldest = this.checks.keys().next();
    if (this.checks.size > maxRememberedChecks && !oldest.done) this.checks.delete(oldest.value);
  }

  /**
   * revokeVerificationMessage: once its code is verified or cancelled, a message not delivered yet is withdrawn
   * (Telegram leaves one already delivered or read as it is). Best effort: a refusal is logged only.
   */
  async revoke(messageId: string, signal: AbortSignal): Promise<void> {
    const answer = await this.call('revokeVerificationMessage', { request_id: messageId }, signal);
    if (answer.kind !== 'ok' && answer.kind !== 'accepted') this.context.logger.warn({ provider: 'telegram', reason: answer.reason }, 'revokeVerificationMessage failed');
  }

  verifyCallback(request: CallbackRequest): CallbackResult {
    return gatewayReportReceipts(request, this.values.TELEGRAM_GATEWAY_TOKEN, this.clock.now());
  }

  private sendParams(message: OutgoingTelegram, requestId: string): Readonly<Record<string, string | number>> {
    return {
      phone_number: message.to,
      request_id: requestId,
      code: message.code,
      ttl: messageTtl(message.expiresAt, this.clock.now()),
      ...(this.context.callbackUrl !== null && { callback_url: this.context.callbackUrl }),
    };
  }

  private async call(method: string, params: object, signal: AbortSignal): Promise<GatewayAnswer> {
    // HttpApi decides in a SendResult; the method's result is kept aside for the caller.
    const seen: { result: Readonly<Record<string, unknown>> | null } = { result: null };
    const path = `${this.values.TELEGRAM_BASE_URL.pathPrefix}/${method}`;
    const outcome = await this.api.post({ path, headers: this.headers, body: JSON.stringify(params) }, signal, (answer) => {
      const read = readAnswer(answer, this.values.TELEGRAM_GATEWAY_TOKEN);
      if (read.kind !== 'ok') return read;
      seen.result = read.result;
      return { kind: 'accepted', messageId: '' };
    });
    return seen.result === null ? outcome : { kind: 'ok', result: seen.result };
  }
}
