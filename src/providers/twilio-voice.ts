import { LRUCache } from 'lru-cache';
import type { DeliveryReceipt, OutgoingCall, ProviderContext, SendResult } from '../channels/provider-port.js';
import { decideTwilioAnswer, twilioErrorCode, type TwilioAccountApi, type TwilioRequestKind } from './twilio-api.js';

/**
 * The Calls part of the `twilio` provider: a dropped call through Programmable Voice. The call is placed with
 * TwiML that hangs up at once should anyone answer, rings for CALL_RING_SECONDS at most (Timeout), and asks for
 * the progress callbacks; the `ringing` one is the proof the phone rang (DELIVERED) and the moment the call is
 * cancelled, so that the user sees the caller id without picking up.
 */

/** What the call does if answered: nothing but hang up. */
export const hangUpTwiml = '<Response><Hangup/></Response>';

/** Every progress event Twilio can call back for: `ringing` is the one that matters, the others close the record. */
export const progressEvents = ['initiated', 'ringing', 'answered', 'completed'] as const;

const call: TwilioRequestKind = {
  noun: 'call',
  errors: {
    13223: 'invalid phone number format',
    13224: 'invalid phone number',
    13225: 'forbidden phone number',
    13226: 'invalid country code',
    13227: 'no permission to call this country (Geo Permissions)',
    21205: 'invalid StatusCallback URL',
    21210: "caller id not verified: 'From' must be a number of the account or a verified caller id",
    21211: "invalid 'To' number",
    21212: "invalid 'From' number (caller id)",
    21213: "a caller id ('From') is required",
    21214: "'To' number cannot be reached",
    21215: "calls to this number are not permitted by the account's Geo Permissions",
    21216: 'calls to this number are blocked',
    21217: "'To' number does not appear to be valid",
    21219: "'To' number not verified (trial account)",
    21401: 'invalid phone number',
  },
};

const hangUpRequest: TwilioRequestKind = {
  noun: 'hang-up',
  errors: {
    20404: 'no such call',
  },
};

/** Twilio's error code of a call that has already ended by the time it is hung up: nothing left to do. */
const callAlreadyOver = 21220;

/**
 * CallStatus of a progress callback -> our receipt status; absent: no receipt (a status Twilio may add later).
 * A call is DELIVERED once the phone rang: ringing, answered (in-progress, completed), or rang out (no-answer,
 * canceled: we cancel it at ringing). `busy` and `failed` are calls that ended without ringing (contract 8: a
 * permanent failure of the provider): UNDELIVERED fails over while the verification is pending. Arriving after
 * `ringing` (a user who declines), they change nothing: a send's status only moves forward.
 */
const receiptStatuses: Readonly<Record<string, DeliveryReceipt['status']>> = {
  queued: 'SENT',
  initiated: 'SENT',
  ringing: 'DELIVERED',
  'in-progress': 'DELIVERED',
  completed: 'DELIVERED',
  'no-answer': 'DELIVERED',
  canceled: 'DELIVERED',
  busy: 'UNDELIVERED',
  failed: 'UNDELIVERED',
};

/**
 * CallStatus at which the call is still up, and the Status that ends it: `canceled` for a ringing call, `completed`
 * for an answered one (Twilio's update applies each only in that state).
 */
const hangUpAt: Readonly<Record<string, 'canceled' | 'completed'>> = { ringing: 'canceled', 'in-progress': 'completed' };

/** A Call SID as Twilio's description has it: the only thing put into the hang-up's path. */
const callSidPattern = /^CA[0-9a-f]{32}$/i;

/** How a hang-up is bounded. */
export interface HangUpTiming {
  /** The longest one hang-up request may take. */
  readonly timeoutMs: number;
  /** The wait before the one retry after a transient failure. */
  readonly retryDelayMs: number;
}

/** Short: the phone is ringing while we wait, and the call ends by itself after CALL_RING_SECONDS anyway. */
export const defaultHangUpTiming: HangUpTiming = { timeoutMs: 5_000, retryDelayMs: 500 };

export class TwilioCalls {
  /**
   * The hang-ups already made (CallSid and Status), so that a repeated callback makes none twice; bounded: a
   * call is over long before its entry is dropped.
   */
  private readonly hungUp = new LRUCache<string, true>({ max: 10_000, ttl: 15 * 60_000 });
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly api: TwilioAccountApi,
    private readonly context: ProviderContext,
    private readonly timing: HangUpTiming = defaultHangUpTiming,
  ) {}

  /** POST /Calls.json: To, From (the caller id), Twiml, Timeout, and the progress callbacks when there is a URL. */
  place(outgoing: OutgoingCall, signal: AbortSignal): Promise<SendResult> {
    // Without a callback URL the call cannot be cut at the first ring: it rings out after Timeout (no-answer).
    const form = callForm(outgoing.to, outgoing.callerId, hangUpTwiml, this.context.callRingSeconds, this.context.callbackUrl);
    return this.api.postForm('/Calls.json', form, signal, (answer) => decideTwilioAnswer(answer, call, this.context.logger));
  }

  /**
   * Reads a call's (already verified) progress callback: its receipt, none for a status that is no outcome. A call
   * still up (ringing, answered) is hung up in the background: the callback does not wait for it.
   */
  statusCallback(form: URLSearchParams): readonly DeliveryReceipt[] {
    const callSid = form.get('CallSid');
    const callStatus = form.get('CallStatus');
    if (callSid === null || callSid === '' || callStatus === null) return [];
    const hangUp = hangUpAt[callStatus];
    if (hangUp !== undefined) this.hangUp(callSid, hangUp);
    const status = receiptStatuses[callStatus];
    if (status === undefined) return [];
    return [{ messageId: callSid, status, detail: detailOf(callStatus, form), at: null }];
  }

  /** Resolves once every hang-up in flight (retries included) has ended. */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Ends the call with Status=`status`, once per call and status, retried once after a transient failure. */
  private hangUp(callSid: string, status: 'canceled' | 'completed'): void {
    if (!callSidPattern.test(callSid)) {
      this.context.logger.warn({ provider: 'twilio', status }, 'a call callback with a CallSid Twilio never gives; not hung up');
      return;
    }
    const key = `${callSid} ${status}`;
    if (this.hungUp.has(key)) return;
    this.hungUp.set(key, true);
    const running = this.hangUpWithRetry(callSid, status)
      // Nothing is awaiting it: a fault must end up in the log, never as an unhandled rejection.
      .catch((err: unknown) => this.context.logger.error({ provider: 'twilio', callSid, status, err }, 'hanging up the call failed'))
      .finally(() => this.inFlight.delete(running));
    this.inFlight.add(running);
  }

  private async hangUpWithRetry(callSid: string, status: 'canceled' | 'completed'): Promise<void> {
    let result = await this.requestHangUp(callSid, status);
    if (result.kind === 'transient') {
      await new Promise((resolve) => setTimeout(resolve, this.timing.retryDelayMs));
      result = await this.requestHangUp(callSid, status);
    }
    if (result.kind === 'accepted') return;
    this.context.logger.warn(
      { provider: 'twilio', callSid, status, reason: result.reason },
      'could not hang up the call; it rings for CALL_RING_SECONDS at most',
    );
  }

  /**
   * One POST /Calls/{CallSid}.json with Status, bounded by the hang-up time-out. A call that has already ended
   * (answered and hung up by its TwiML, or rung out) is what a hang-up wants: done too.
   */
  private requestHangUp(callSid: string, status: 'canceled' | 'completed'): Promise<SendResult> {
    const form = new URLSearchParams({ Status: status });
    return this.api.postForm(`/Calls/${callSid}.json`, form, AbortSignal.timeout(this.timing.timeoutMs), (answer): SendResult => {
      const done = (answer.status >= 200 && answer.status < 300) || twilioErrorCode(answer) === callAlreadyOver;
      return done ? { kind: 'accepted', messageId: callSid } : decideTwilioAnswer(answer, hangUpRequest, this.context.logger);
    });
  }
}

/** The Calls.json form of a call: To, From, Twiml, Timeout, and the progress callbacks when there is a URL for them. */
export function callForm(to: string, from: string, twiml: string, ringSeconds: number, statusCallback: string | null): URLSearchParams {
  const form = new URLSearchParams({ To: to, From: from, Twiml: twiml, Timeout: String(ringSeconds) });
  if (statusCallback !== null) {
    form.set('StatusCallback', statusCallback);
    for (const event of progressEvents) form.append('StatusCallbackEvent', event);
    form.set('StatusCallbackMethod', 'POST');
  }
  return form;
}

/** Twilio's status, with the SIP response and error code that explain it when the callback has them. */
function detailOf(callStatus: string, form: URLSearchParams): string {
  const why = (['SipResponseCode', 'ErrorCode'] as const).flatMap((name) => {
    const value = form.get(name);
    return value !== null && /^\d{1,6}$/.test(value) ? [`${name} ${value}`] : [];
  });
  return why.length > 0 ? `${callStatus} (${why.join(', ')})` : callStatus;
}
