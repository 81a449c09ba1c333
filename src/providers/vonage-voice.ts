import type { KeyObject } from 'node:crypto';
import type { CallbackRequest, CallbackResult, DeliveryReceipt, OutgoingVoice, ProviderContext, SendResult } from '../channels/provider-port.js';
import { systemClock } from '../domain/ports.js';
import { asObject, e164Digits, HttpApi, jsonObject, nonEmptyString, transient, type HttpAnswer, type HttpBaseUrl } from './http-provider.js';
import { speechLanguage } from './speech-language.js';
import { applicationJwt, checkSignedWebhook } from './vonage-jwt.js';

/**
 * The voice part of the `vonage` provider (contract 13): `POST /v1/calls` of the Voice API with an NCCO whose
 * `talk` action reads the code (https://developer.vonage.com/en/api/voice#createCall,
 * https://developer.vonage.com/en/voice/voice-api/ncco-reference#talk), authenticated by the application's JWT.
 * Call events come to `{callback URL}/voice`, signed as Vonage signs webhooks.
 */

/** The path under the provider's callback URL that voice call events come to. */
export const vonageVoiceCallbackPath = '/voice';

/** What the voice part is configured with. */
export interface VonageVoiceSettings {
  readonly applicationId: string;
  readonly privateKey: KeyObject;
  readonly signatureSecret: string;
  /** The account's API key: a signed webhook's `api_key` claim must be it. */
  readonly apiKey: string;
  readonly baseUrl: HttpBaseUrl;
}

/**
 * A call event's `status` -> receipt (https://developer.vonage.com/en/voice/voice-api/webhook-reference#event-webhook):
 * answered (and completed, which follows an answer) is DELIVERED; busy, cancelled, unanswered, rejected, failed and
 * timeout mean the code was not heard: undelivered (failover). Others (machine, human, input...) are no outcome.
 */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  started: 'SENT',
  ringing: 'SENT',
  answered: 'DELIVERED',
  completed: 'DELIVERED',
  busy: 'UNDELIVERED',
  cancelled: 'UNDELIVERED',
  unanswered: 'UNDELIVERED',
  rejected: 'UNDELIVERED',
  failed: 'UNDELIVERED',
  timeout: 'UNDELIVERED',
};

/** The NCCO of one call: one `talk` action that reads the sentence VOICE_REPEAT times (`loop`). */
export function spokenCodeNcco(voice: OutgoingVoice): readonly object[] {
  return [{ action: 'talk', text: voice.sentence, language: speechLanguage(voice.language), premium: false, loop: voice.repeat }];
}

export class VonageVoiceCalls {
  private readonly api: HttpApi;
  private readonly path: string;

  constructor(
    private readonly settings: VonageVoiceSettings,
    private readonly context: ProviderContext,
  ) {
    this.api = new HttpApi(settings.baseUrl.origin, 'Vonage');
    this.path = `${settings.baseUrl.pathPrefix}/v1/calls`;
  }

  async place(voice: OutgoingVoice, signal: AbortSignal): Promise<SendResult> {
    const body = {
      to: [{ type: 'phone', number: e164Digits(voice.to) }],
      from: { type: 'phone', number: e164Digits(voice.from) },
      ncco: spokenCodeNcco(voice),
      ...(this.context.callbackUrl !== null && { event_url: [`${this.context.callbackUrl}${vonageVoiceCallbackPath}`], event_method: 'POST' }),
      // Vonage hangs up a call still ringing after this long (contract 8: CALL_RING_SECONDS at most).
      ringing_timer: this.context.callRingSeconds,
    };
    const jwt = await applicationJwt(this.settings.applicationId, this.settings.privateKey, systemClock.now());
    const headers = { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' };
    return this.api.post({ path: this.path, headers, body: JSON.stringify(body) }, signal, (answer) => this.decide(answer));
  }

  async close(): Promise<void> {
    await this.api.close();
  }

  /** Reads a signed call event: its receipt, none for a status that is no outcome. */
  eventCallback(request: CallbackRequest): CallbackResult {
    if (request.method.toUpperCase() !== 'POST') return { kind: 'forbidden', reason: 'Vonage call events are POSTs (event_method POST)' };
    const check = checkSignedWebhook(this.settings.signatureSecret, request.headers.authorization, request.rawBody, systemClock.now());
    if (!check.valid) return { kind: 'forbidden', reason: `Vonage signed webhook: ${check.reason}` };
    const { api_key: apiKey, application_id: applicationId } = check.claims;
    if (apiKey !== undefined && apiKey !== this.settings.apiKey) return { kind: 'forbidden', reason: 'signed for another Vonage account (api_key)' };
    // Vonage signs every Voice event with its application's id: one without it was not signed for this application.
    if (applicationId === undefined) return { kind: 'forbidden', reason: 'signed without an application_id (Voice events carry one)' };
    if (applicationId !== this.settings.applicationId) {
      return { kind: 'forbidden', reason: 'signed for another Vonage application (application_id)' };
    }
    const event = jsonObject(request.rawBody);
    if (event === null) return { kind: 'malformed', reason: 'a call event is a JSON object' };
    const uuid = nonEmptyString(event.uuid);
    const status = nonEmptyString(event.status);
    if (uuid === null || status === null) return { kind: 'malformed', reason: 'a call event has uuid and status' };
    const receipt = receiptStatuses[status];
    if (receipt === undefined) return { kind: 'receipts', receipts: [] };
    const at = typeof event.timestamp === 'string' ? new Date(event.timestamp) : null;
    return { kind: 'receipts', receipts: [{ messageId: uuid, status: receipt, detail: status, at: at !== null && !Number.isNaN(at.getTime()) ? at : null }] };
  }

  /**
   * Maps one Voice API answer to a result: 201 with the call's uuid is accepted; 429 and 5xx transient; 401/403 the
   * application's credentials (logged once); any other 4xx permanent, named by the names of its invalid parameters
   * (never Vonage's own detail, which may echo the number).
   */
  private decide({ status, retryAfter, body }: HttpAnswer): SendResult {
    const json = jsonObject(body);
    if (status === 429 || status >= 500) {
      return transient(status === 429 ? `Vonage: throttled (HTTP ${status})` : `Vonage: server error (HTTP ${status})`, retryAfter);
    }
    if (status === 401 || status === 403) {
      this.context.logger.warn({ provider: 'vonage', status }, 'Vonage refused the application credentials');
      return { kind: 'permanent', reason: `Vonage refused the credentials (VONAGE_APPLICATION_ID / VONAGE_PRIVATE_KEY; HTTP ${status})` };
    }
    if (status === 200 || status === 201) {
      const uuid = nonEmptyString(json?.uuid);
      return uuid !== null && /^[\w-]{1,100}$/.test(uuid) ? { kind: 'accepted', messageId: uuid } : { kind: 'permanent', reason: `Vonage: HTTP ${status} without a call uuid` };
    }
    const invalid = Array.isArray(json?.invalid_parameters)
      ? json.invalid_parameters.flatMap((p) => {
          const name = nonEmptyString(asObject(p)?.name);
          return name !== null && /^[\w.[\]-]{1,60}$/.test(name) ? [name] : [];
        })
      : [];
    return { kind: 'permanent', reason: `Vonage refused the call (HTTP ${status}${invalid.length > 0 ? `; invalid: ${invalid.join(', ')}` : ''})` };
  }
}
