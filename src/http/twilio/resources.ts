import type { Verification } from '../../domain/verification.js';
import { sidOf } from './sids.js';

/** Twilio's channel word for each record type (contract 15); a dropped call is a call to Twilio's eyes. */
const channelOfType: Readonly<Record<string, TwilioChannel>> = {
  SMS: 'sms',
  DROPPED_CALL: 'call',
  VOICE_CALL: 'call',
  WHATSAPP: 'whatsapp',
};

/** The request type each Twilio channel word asks for; the channel registry says whether a driver takes it. */
export const requestTypeOfChannel = { sms: 'SEND_SMS', call: 'VOICE_CALL', whatsapp: 'WHATSAPP' } as const;

export type TwilioChannel = keyof typeof requestTypeOfChannel;

export function isTwilioChannel(word: string): word is TwilioChannel {
  return Object.hasOwn(requestTypeOfChannel, word);
}

export type TwilioStatus = 'pending' | 'approved' | 'canceled' | 'max_attempts_reached' | 'expired' | 'failed';

/** Twilio's status of a record (contract 15). */
export function twilioStatus(v: Verification): TwilioStatus {
  switch (v.status) {
    case 'PENDING':
      return 'pending';
    case 'SUCCESS':
      return 'approved';
    case 'EXPIRED':
      return 'expired';
    case 'FAILED':
      return v.failureReason === 'CANCELED' ? 'canceled' : v.failureReason === 'MAX_ATTEMPTS' ? 'max_attempts_reached' : 'failed';
  }
}

/** Twilio's Verification resource (`verify.v2.service.verification`). */
export interface VerificationResource {
  sid: string;
  service_sid: string;
  account_sid: string;
  to: string;
  channel: TwilioChannel;
  status: TwilioStatus;
  valid: boolean;
  lookup: Record<string, never>;
  amount: null;
  payee: null;
  send_code_attempts: { time: string; channel: string }[];
  date_created: string;
  date_updated: string;
  sna: null;
  url: string;
}

/** Twilio's VerificationCheck resource (`verify.v2.service.verification_check`). */
export interface VerificationCheckResource {
  sid: string;
  service_sid: string;
  account_sid: string;
  to: string;
  channel: TwilioChannel;
  status: TwilioStatus;
  valid: boolean;
  amount: null;
  payee: null;
  sna_attempts_error_codes: never[];
  date_created: string;
  date_updated: string;
}

export function serviceUrl(base: string, clientId: string): string {
  return `${base}/v2/Services/${sidOf('VA', clientId)}`;
}

function common(v: Verification) {
  return {
    sid: sidOf('VE', v.id),
    service_sid: sidOf('VA', v.clientId),
    account_sid: sidOf('AC', v.clientId),
    to: v.phoneNumber,
    channel: channelOfType[v.type] ?? 'sms',
    status: twilioStatus(v),
    valid: v.status === 'SUCCESS',
    amount: null,
    payee: null,
    date_created: v.createdAt.toISOString(),
    date_updated: v.updatedAt.toISOString(),
  };
}

export function verificationResource(v: Verification, base: string): VerificationResource {
  return {
    ...common(v),
    lookup: {},
    // The latest send only: the record keeps one delivery (its `sends` counts them all).
    send_code_attempts: v.delivery.sends > 0 ? [{ time: v.delivery.updatedAt.toISOString(), channel: v.delivery.channel }] : [],
    sna: null,
    url: `${serviceUrl(base, v.clientId)}/Verifications/${sidOf('VE', v.id)}`,
  };
}

export function checkResource(v: Verification): VerificationCheckResource {
  return { ...common(v), sna_attempts_error_codes: [] };
}
