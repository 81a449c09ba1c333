import type { DeliveryReceipt, OutgoingVoice, ProviderContext, SendResult } from '../channels/provider-port.js';
import { speechLanguage } from './speech-language.js';
import { decideTwilioAnswer, type TwilioAccountApi, type TwilioRequestKind } from './twilio-api.js';
import { callForm } from './twilio-voice.js';

/**
 * The voice part of the `twilio` provider (contract 13): a call through Programmable Voice whose inline TwiML
 * reads the code (`<Say>`, VOICE_REPEAT times with a `<Pause>` between), ringing for CALL_RING_SECONDS at most
 * (Timeout). Its progress callbacks come to `{callback URL}/voice`, so that the route tells them from a dropped
 * call's, which is hung up at the first ring: this call must not be.
 */

/** The path under the provider's callback URL that voice calls report to. */
export const voiceCallbackPath = '/voice';

/**
 * CallStatus -> receipt: a call is DELIVERED once answered (in-progress; completed comes only after an answer);
 * busy, no-answer, failed and canceled mean nobody heard the code, an undelivered receipt (failover, contract 13).
 * Ringing is still on its way.
 */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  queued: 'SENT',
  initiated: 'SENT',
  ringing: 'SENT',
  'in-progress': 'DELIVERED',
  completed: 'DELIVERED',
  busy: 'UNDELIVERED',
  'no-answer': 'UNDELIVERED',
  failed: 'UNDELIVERED',
  canceled: 'UNDELIVERED',
};

/** Twilio's `language` for a BCP 47 tag the voice driver chose (https://www.twilio.com/docs/voice/twiml/say). */
export const twilioSayLanguage = speechLanguage;

const escapeXml = (text: string): string =>
  text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c);

/** The TwiML of one call: the sentence VOICE_REPEAT times, a one-second pause between, then the call ends. */
export function spokenCodeTwiml(voice: OutgoingVoice): string {
  const say = `<Say language="${twilioSayLanguage(voice.language)}">${escapeXml(voice.sentence)}</Say>`;
  return `<Response>${Array.from({ length: voice.repeat }, () => say).join('<Pause length="1"/>')}<Hangup/></Response>`;
}

const call: TwilioRequestKind = {
  noun: 'call',
  errors: {
    13223: 'invalid phone number format',
    13224: 'invalid phone number',
    13225: 'forbidden phone number',
    13226: 'invalid country code',
    13227: 'no permission to call this country (Geo Permissions)',
    21205: 'invalid StatusCallback URL',
    21210: "caller id not verified: 'From' (VOICE_CALLER_NUMBER) must be a number of the account or a verified caller id",
    21211: "invalid 'To' number",
    21212: "invalid 'From' number (VOICE_CALLER_NUMBER)",
    21214: "'To' number cannot be reached",
    21215: "calls to this number are not permitted by the account's Geo Permissions",
    21216: 'calls to this number are blocked',
    21217: "'To' number does not appear to be valid",
    21219: "'To' number not verified (trial account)",
    21401: 'invalid phone number',
  },
};

export class TwilioSpokenCalls {
  constructor(
    private readonly api: TwilioAccountApi,
    private readonly context: ProviderContext,
  ) {}

  /** POST /Calls.json: To, From, Twiml, Timeout, and the progress callbacks to `{callback URL}/voice`. */
  place(voice: OutgoingVoice, signal: AbortSignal): Promise<SendResult> {
    const callbackUrl = this.context.callbackUrl === null ? null : `${this.context.callbackUrl}${voiceCallbackPath}`;
    const form = callForm(voice.to, voice.from, spokenCodeTwiml(voice), this.context.callRingSeconds, callbackUrl);
    return this.api.postForm('/Calls.json', form, signal, (answer) => decideTwilioAnswer(answer, call, this.context.logger));
  }

  /** Reads a voice call's (already verified) progress callback: its receipt, none for a status that is no outcome. */
  statusCallback(form: URLSearchParams): readonly DeliveryReceipt[] {
    const callSid = form.get('CallSid');
    const callStatus = form.get('CallStatus');
    if (callSid === null || callSid === '' || callStatus === null) return [];
    const status = receiptStatuses[callStatus];
    if (status === undefined) return [];
    const code = form.get('SipResponseCode');
    const detail = code !== null && /^\d{3}$/.test(code) ? `${callStatus} (SipResponseCode ${code})` : callStatus;
    return [{ messageId: callSid, status, detail, at: null }];
  }
}
