import type { ProviderContext, SendResult } from '../../channels/provider-port.js';
import { asObject, jsonObject, transient, type HttpAnswer } from '../http-provider.js';

/**
 * How the Cloud API's errors decide (contract 8 and 13), from Meta's published list
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes). Graph errors read
 * `{ error: { message, type, code, error_subcode, error_data: { details }, is_transient, fbtrace_id } }`; the
 * code decides, never the message (it may echo the number).
 */

/** Retrying later helps: throttling, Meta's own failures and maintenance. */
const transientCodes: Readonly<Record<number, string>> = {
  1: 'API unknown (possibly a server error)',
  2: 'API service temporarily unavailable',
  4: 'API too many calls',
  17: 'API user too many calls',
  341: 'application limit reached',
  80007: 'rate limit issues',
  130429: 'throughput rate limit hit',
  131000: 'something went wrong',
  131016: 'service unavailable',
  131048: 'spam rate limit hit',
  131056: '(business account, consumer account) pair rate limit hit',
  131057: 'business account in maintenance mode',
  133004: 'server temporarily unavailable',
};

/** The access token or its permissions: no retry helps, and the operator must act. */
const credentialCodes: Readonly<Record<number, string>> = {
  0: 'authentication failed',
  3: 'the app lacks the capability',
  10: 'permission denied',
  190: 'the access token has expired or is invalid',
  131005: 'access denied',
};

/** No retry through Meta can help: the number, the template, the account. */
const permanentCodes: Readonly<Record<number, string>> = {
  33: 'the phone number id does not exist',
  100: 'invalid parameter',
  368: 'temporarily blocked for policy violations',
  130472: "the user's number is part of an experiment",
  130497: 'the business may not message users in this country',
  131008: 'a required parameter is missing',
  131009: 'a parameter value is not valid',
  131021: 'the recipient is the sender',
  131026: 'message undeliverable (not on WhatsApp, old app, or terms not accepted)',
  131030: 'the recipient is not in the allowed list (test number)',
  131031: 'the business account is locked',
  131042: 'business eligibility: payment issue',
  131045: 'incorrect certificate',
  131047: 'more than 24 hours since the user last replied',
  131049: 'Meta chose not to deliver it',
  131051: 'unsupported message type',
  132000: 'template parameter count mismatch',
  132001: 'the template does not exist in that language',
  132005: 'template text too long',
  132007: 'template format policy violated',
  132012: 'template parameter format mismatch',
  132015: 'the template is paused',
  132016: 'the template is disabled',
  133010: 'the phone number is not registered',
};

/** Meta's error code (`error.code`), or null. */
export function metaErrorCode(answer: HttpAnswer): number | null {
  const code = asObject(jsonObject(answer.body)?.error)?.code;
  return typeof code === 'number' && Number.isInteger(code) ? code : null;
}

/** The template is missing in the language asked for: sent again in en_US (contract 13). */
export const templateMissingInLanguage = 132001;

/**
 * One answer of `POST /{version}/{phone-number-id}/messages` as a result: 200 with `messages[0].id` (a wamid) is
 * accepted; known codes decide as listed; an unknown one by `is_transient` and the HTTP status (429 and 5xx
 * transient, 401/403 the credentials, other 4xx permanent).
 */
export function decideMetaAnswer(answer: HttpAnswer, logger: ProviderContext['logger']): SendResult {
  const { status, retryAfter, body } = answer;
  const json = jsonObject(body);
  const error = asObject(json?.error);
  const code = metaErrorCode(answer);
  const what = `HTTP ${status}${code !== null ? `, error ${code}` : ''}`;
  if (status === 200 && error === null) {
    const first = Array.isArray(json?.messages) ? asObject(json.messages[0]) : null;
    const id = first?.id;
    if (typeof id === 'string' && id !== '' && id.length <= 200) return { kind: 'accepted', messageId: id };
    // It may well have been taken: a retry through Meta could send the code twice.
    return { kind: 'permanent', reason: `Meta: ${what} without a message id` };
  }
  if (code !== null && transientCodes[code] !== undefined) return transient(`Meta: ${transientCodes[code]} (${what})`, retryAfter);
  const credentials = code !== null ? credentialCodes[code] : undefined;
  if (credentials !== undefined || (code === null && (status === 401 || status === 403))) {
    logger.warn({ provider: 'meta', status, metaCode: code }, 'Meta refused the access token');
    return { kind: 'permanent', reason: `Meta refused the access token (META_ACCESS_TOKEN: ${credentials ?? 'unauthorized'}; ${what})` };
  }
  if (code !== null && permanentCodes[code] !== undefined) return { kind: 'permanent', reason: `Meta refused the message: ${permanentCodes[code]} (${what})` };
  if (error?.is_transient === true || status === 429 || status >= 500) return transient(`Meta: ${status >= 500 ? 'server error' : 'try again later'} (${what})`, retryAfter);
  return { kind: 'permanent', reason: `Meta refused the message (${what})` };
}
