import type { ProviderContext, SendResult } from '../channels/provider-port.js';
import { HttpApi, jsonObject, transient, type HttpAnswer, type HttpBaseUrl } from './http-provider.js';

/**
 * What the Messages and the Calls parts of the `twilio` provider share: one connection pool to Twilio's 2010 REST
 * API, the account's Basic credentials, the account's path, and how an answer of that API reads (its error JSON
 * `{ code, message, status }` is the same for every resource).
 */
export class TwilioAccountApi {
  private readonly api: HttpApi;
  private readonly authorization: string;
  /** `<prefix>/2010-04-01/Accounts/<AccountSid>`: every resource used here is below it. */
  private readonly accountPath: string;

  constructor(accountSid: string, authToken: string, baseUrl: HttpBaseUrl) {
    this.api = new HttpApi(baseUrl.origin, 'Twilio');
    this.accountPath = `${baseUrl.pathPrefix}/2010-04-01/Accounts/${accountSid}`;
    this.authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  }

  /** Posts a form to `resource` (e.g. `/Messages.json`) under the account and lets `decide` read the answer. */
  postForm(resource: string, form: URLSearchParams, signal: AbortSignal, decide: (answer: HttpAnswer) => SendResult): Promise<SendResult> {
    const headers = { authorization: this.authorization, 'content-type': 'application/x-www-form-urlencoded' };
    return this.api.post({ path: `${this.accountPath}${resource}`, headers, body: form.toString() }, signal, decide);
  }

  /** Waits for requests in flight, then closes the pool; safe to call more than once. */
  close(): Promise<void> {
    return this.api.close();
  }
}

/** What one kind of request is, for the reasons an answer gives. */
export interface TwilioRequestKind {
  /** "message", "call", "hang-up": says what Twilio refused or answered. */
  readonly noun: string;
  /**
   * Twilio error codes of this resource that no retry can fix, with what they mean
   * (https://www.twilio.com/docs/api/errors). Every 4xx is permanent anyway; these name the reason.
   */
  readonly errors: Readonly<Record<number, string>>;
}

/** Twilio error codes of throttling: retrying later helps, whatever the HTTP status. */
const throttlingErrors: ReadonlySet<number> = new Set([20429, 14107, 63018]);

/** Twilio's error code in an answer's JSON, or null. */
export function twilioErrorCode(answer: HttpAnswer): number | null {
  const code = jsonObject(answer.body)?.code;
  return typeof code === 'number' ? code : null;
}

/**
 * Maps one answer of the REST API to a result: a 200/201 with the resource's sid is accepted, throttling and 5xx
 * are transient (with Retry-After), 401/403 is the credentials (logged once, the token never), any other 4xx is
 * permanent and named by its error code where known. Twilio's own message is never repeated: it may echo the number.
 */
export function decideTwilioAnswer(answer: HttpAnswer, kind: TwilioRequestKind, logger: ProviderContext['logger']): SendResult {
  const { status, retryAfter, body } = answer;
  const json = jsonObject(body);
  const code = twilioErrorCode(answer);
  const what = `HTTP ${status}${code !== null ? `, error ${code}` : ''}`;
  if (status === 200 || status === 201) {
    if (typeof json?.sid === 'string' && json.sid !== '') return { kind: 'accepted', messageId: json.sid };
    // It may well have been taken: a retry through Twilio could send the code twice.
    return { kind: 'permanent', reason: `Twilio: ${what} without a ${kind.noun} sid` };
  }
  const throttled = status === 429 || (code !== null && throttlingErrors.has(code));
  if (throttled || status >= 500) {
    const reason = throttled ? `Twilio: throttled (${what})` : `Twilio: server error (${what})`;
    return transient(reason, retryAfter);
  }
  if (status === 401 || status === 403) {
    logger.warn({ provider: 'twilio', status, twilioCode: code }, 'Twilio refused the credentials');
    return { kind: 'permanent', reason: `Twilio refused the credentials (TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN; ${what})` };
  }
  if (status >= 400) {
    const meaning = code !== null ? kind.errors[code] : undefined;
    return { kind: 'permanent', reason: `Twilio refused the ${kind.noun}: ${meaning ? `${meaning} (${what})` : what}` };
  }
  return { kind: 'permanent', reason: `Twilio: unexpected answer (${what})` };
}
