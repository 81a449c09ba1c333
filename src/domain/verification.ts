import { timingSafeEqual, createHash } from 'node:crypto';
import { sum, zero, type Amount } from './money.js';
import type { DeliveryChannel } from './channel-driver.js';
import type { Risk } from './risk.js';
import { sendErrorRecord, type AttemptRecord, type SendError } from './send-error.js';
import { serviceSendOf } from './service-code.js';

export { sendError, sendErrorRecord, type AttemptRecord, type SendError, type SendErrorCode } from './send-error.js';

/** Channel asked for in a create request (seed 4.2). */
export type RequestType = 'SEND_SMS' | 'DROPPED_CALL' | 'WHATSAPP' | 'VOICE_CALL' | 'TELEGRAM' | 'SILENT';
/** Type shown on a record (contract 3.4). */
export type VerificationType = 'SMS' | 'DROPPED_CALL' | 'WHATSAPP' | 'VOICE_CALL' | 'TELEGRAM' | 'SILENT';
export type VerificationStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'EXPIRED';
/** Why a verification is FAILED (contract 3.4). */
export type FailureReason = 'MAX_ATTEMPTS' | 'UNDELIVERABLE' | 'CANCELED';
/** Where the latest send of the code stands (contract 3.4 `delivery.status`). */
export type SendStatus = 'QUEUED' | 'SENT' | 'DELIVERED' | 'UNDELIVERED' | 'FAILED';

/**
 * One provider's turn at sending a verification's code (contract 13 `deliveries`), oldest first on the record:
 * the calls made to that provider for one send, the retries of a transient failure included.
 */
export interface DeliveryAttempt {
  readonly channel: Delivery['channel'];
  /** The provider tried (`test` for a test number). */
  readonly provider: string;
  /**
   * Where that turn stands: QUEUED while a failed call waits for its retry, SENT or DELIVERED once taken, then as
   * its receipts say; FAILED when refused or given up.
   */
  readonly status: SendStatus;
  /** When its latest call was made. */
  readonly at: Date;
  /** Provider calls made in this turn (a retry after a transient failure is one more). */
  readonly attempts: number;
  /** The latest failure of this turn; null when none failed. */
  readonly lastError: SendError | null;
  /**
   * What the send cost in COST_CURRENCY (contract 17), a decimal string: the provider's reported price, else the
   * imported one; null or absent: unknown, or no provider took it.
   */
  readonly cost?: Amount | null;
}

/** The latest send of a verification's code (contract 3.4 `delivery`). */
export interface Delivery {
  /** The channel that carries it: a dropped call falling back to SMS reads SMS. */
  readonly channel: DeliveryChannel;
  /** The provider that took it; null before the first attempt. */
  readonly provider: string | null;
  /** That provider's id of the message, the key its receipts come under (not shown to clients). */
  readonly messageId: string | null;
  readonly status: SendStatus;
  /** How many times a provider took the code. */
  readonly sends: number;
  readonly updatedAt: Date;
}

/** A verification as stored. */
export interface Verification {
  readonly id: string;
  readonly clientId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly expiresAt: Date;
  readonly otp: string;
  /** E.164. */
  readonly phoneNumber: string;
  /** +NNN. */
  readonly countryCode: string;
  readonly counter: number;
  /** The number the user is contacted from: local format in the user's own country, else E.164 (see shownTo). */
  readonly pairedNumber: string;
  /**
   * That number in E.164: a dropped call can be verified with it (contract 9). Null on records made before it
   * was kept, which match their caller id in local format only.
   */
  readonly pairedE164: string | null;
  readonly type: VerificationType;
  readonly status: VerificationStatus;
  readonly webhookUrl: string | null;
  readonly reference: string | null;
  /** Null unless FAILED. */
  readonly failureReason: FailureReason | null;
  /** Sends of the code asked for: 1 at create, one more per resend (at most OTP_MAX_SENDS). */
  readonly sendRequests: number;
  /** When the latest of them was asked for (the resend cool-down runs from it). */
  readonly lastSendAt: Date;
  /** BCP 47 locale the create asked for (its SMS text's language); null: the client's default, then English. */
  readonly locale: string | null;
  /** The client withholds codes: `otp` reads null in every answer and webhook (contract 9). */
  readonly codeWithheld: boolean;
  /** To one of the client's test numbers: a fixed code, no provider, no limit (contract 9). */
  readonly testNumber: boolean;
  /**
   * The number's country, ISO 3166 alpha-2, or 001 for a non-geographic number (+800, +882...), for stats and
   * conversion; null on a verification made before the service stored it (reading it back is not worth a parse).
   */
  readonly regionCode: string | null;
  /**
   * The mobile network the number's range was given to (the number metadata's carrier), where the data names
   * one: conversion is judged per country and network (contract 18). Absent: not known.
   */
  readonly network?: string | null;
  readonly delivery: Delivery;
  /** A caller's own SMS text with `{{code}}` (contract 15, CAMARA send-code), used instead of the client's templates. */
  readonly messageText?: string | null;
  /**
   * The code was made by an auth server and is only delivered here (contract 15's relays): it is never verified
   * here, and conversion reads its delivery instead.
   */
  readonly relayed?: boolean;
  /** Why the create was judged as it was (contract 18); absent: allowed, nothing objected. */
  readonly risk?: Risk;
  /** Every send attempt, oldest first (contract 13); the latest one is `delivery` as it stands. */
  readonly deliveries: readonly DeliveryAttempt[];
  /**
   * The workflow's later steps as the create asked for them (its `fallback`, or the client's default), in order;
   * the record's `fallback` is what is still to come of it (fallbackLeft).
   */
  readonly workflow: readonly RequestType[];
  /** FALLBACK_AFTER_SECONDS as it was for this verification's client at create. */
  readonly fallbackAfterSeconds: number;
  /**
   * When the next step falls due if the code is not verified by then: set when the current step's code is first
   * taken by a provider (a resend does not move it); null while it is not sent yet, or no step is left.
   */
  readonly nextStepAt: Date | null;
  /**
   * When the latest send goes once more through its route's next provider unless a DELIVERED receipt comes first
   * (a route's `--failover-after`, contract 17); null: no such send is waiting.
   */
  readonly failoverAt: Date | null;
  /** Steps of `workflow` taken so far: each sends as a resend does, for stats and quota, but not for OTP_MAX_SENDS. */
  readonly steps: number;
}

/**
 * The code as answers and webhooks show it: null when the client withholds codes (contract 9), and while a silent
 * step is the latest (contract 19, SILENT: no code was sent; it goes out only if a later step sends it), and while
 * the code the user holds is a verify service's own (contract 19: twilio-verify, vonage-verify), unknown here.
 */
export function shownCode(v: Pick<Verification, 'codeWithheld' | 'otp' | 'delivery' | 'deliveries' | 'phoneNumber'>): string | null {
  return v.codeWithheld || v.delivery.channel === 'SILENT' || serviceSendOf(v) !== null ? null : v.otp;
}

/** The request types still to come (contract 13 `fallback`), in order; [] when none is left or none was asked. */
export function fallbackLeft(v: Verification): readonly RequestType[] {
  return v.workflow.slice(v.steps);
}

/** The attempts with the latest one of `provider` moved to `status` (a receipt), with its error if it says one. */
export function withLatestAttempt(
  attempts: readonly DeliveryAttempt[],
  provider: string,
  status: SendStatus,
  error: SendError | null = null,
): readonly DeliveryAttempt[] {
  const last = attempts[attempts.length - 1];
  if (!last || last.provider !== provider) return attempts;
  return [...attempts.slice(0, -1), { ...last, status, ...(error && { lastError: error }) }];
}

/** The attempts with the latest one through `provider` on `channel` moved to `status` (a receipt for an earlier send). */
export function withAttemptOf(
  attempts: readonly DeliveryAttempt[],
  provider: string,
  channel: DeliveryAttempt['channel'],
  status: SendStatus,
  error: SendError | null,
): readonly DeliveryAttempt[] {
  let at = attempts.length - 1;
  while (at >= 0 && (attempts[at]?.provider !== provider || attempts[at]?.channel !== channel)) at--;
  return attempts.map((a, i) => (i === at ? { ...a, status, ...(error && { lastError: error }) } : a));
}

/** The attempts with the latest one through `provider` costing nothing: the provider refunded it. */
export function withRefund(attempts: readonly DeliveryAttempt[], provider: string): readonly DeliveryAttempt[] {
  let at = attempts.length - 1;
  while (at >= 0 && attempts[at]?.provider !== provider) at--;
  return attempts.map((a, i) => (i === at ? { ...a, cost: zero } : a));
}

/**
 * The attempts with `turn` written in: in place of the latest one when it is the same turn (a retry of the same
 * send through the same provider), else after it.
 */
export function withTurn(attempts: readonly DeliveryAttempt[], turn: DeliveryAttempt): readonly DeliveryAttempt[] {
  const last = attempts[attempts.length - 1];
  const same = turn.attempts > 1 && last?.provider === turn.provider && last.channel === turn.channel && last.status === 'QUEUED';
  return same ? [...attempts.slice(0, -1), turn] : [...attempts, turn];
}

/** A turn as a record shows it and as it is stored (times in ISO 8601). */
export function attemptRecord(a: DeliveryAttempt): AttemptRecord {
  return { channel: a.channel, provider: a.provider, status: a.status, at: a.at.toISOString(), attempts: a.attempts, lastError: sendErrorRecord(a.lastError), cost: a.cost ?? null };
}

/** Statuses of a turn a provider took: each costs, its price known or not. */
const taken: readonly SendStatus[] = ['SENT', 'DELIVERED', 'UNDELIVERED'];

/**
 * What a verification's sends cost (contract 17, the record's `cost`): the sum of its turns' known costs, and how
 * many turns a provider took whose cost is unknown. A test number's cost nothing.
 */
export function verificationCost(v: Pick<Verification, 'deliveries'>): { readonly amount: Amount; readonly unknownSends: number } {
  const known = v.deliveries.flatMap((a) => (a.cost === undefined || a.cost === null ? [] : [a.cost]));
  const unknownSends = v.deliveries.filter((a) => taken.includes(a.status) && (a.cost === undefined || a.cost === null)).length;
  return { amount: sum(known), unknownSends };
}

/**
 * What the record's `delivery` shows of its latest turn (contract 20): its calls and latest failure; 0 and null
 * before any provider was called for it (or when the latest turn is of another channel, before a step's first call).
 */
export function latestTurn(v: Pick<Verification, 'delivery' | 'deliveries'>): Pick<AttemptRecord, 'attempts' | 'lastError'> {
  const last = v.deliveries[v.deliveries.length - 1];
  if (!last || last.channel !== v.delivery.channel || last.provider !== v.delivery.provider) return { attempts: 0, lastError: null };
  return { attempts: last.attempts, lastError: sendErrorRecord(last.lastError) };
}

/**
 * The delivery of a code sent to a test number (contract 9): it reaches no provider, so it reads as delivered by
 * `test` at once; `sends` counts it all the same.
 */
export function testNumberDelivery(channel: Delivery['channel'], sends: number, now: Date): Delivery {
  return { channel, provider: 'test', messageId: null, status: 'DELIVERED', sends, updatedAt: now };
}

/** The attempt a test number's send makes: `test`, delivered at once. */
export function testNumberAttempt(channel: Delivery['channel'], now: Date): DeliveryAttempt {
  return { channel, provider: 'test', status: 'DELIVERED', at: now, attempts: 1, lastError: null, cost: zero };
}

/** A PENDING verification whose time is up reads as EXPIRED, before any sweep records it. */
export function effectiveStatus(v: Verification, now: Date): VerificationStatus {
  return v.status === 'PENDING' && now.getTime() >= v.expiresAt.getTime() ? 'EXPIRED' : v.status;
}

export function asOf(v: Verification, now: Date): Verification {
  const status = effectiveStatus(v, now);
  return status === v.status ? v : { ...v, status, updatedAt: v.expiresAt };
}

/** What a verify attempt comes to. Expected outcomes are values, not exceptions. */
export type VerifyDecision =
  | { readonly kind: 'success'; readonly next: Verification }
  | { readonly kind: 'mismatch'; readonly next: Verification }
  | { readonly kind: 'not-pending'; readonly current: Verification };

/** Decides a verify attempt. Pure: the caller persists `next` and its event. */
export function decideVerify(v: Verification, code: string, now: Date, maxAttempts: number): VerifyDecision {
  const current = asOf(v, now);
  if (current.status !== 'PENDING') return { kind: 'not-pending', current };
  const counter = v.counter + 1;
  if (codesMatch(v.otp, code) || (v.type === 'DROPPED_CALL' && callerIdMatches(v, code))) {
    return { kind: 'success', next: { ...v, counter, status: 'SUCCESS', updatedAt: now } };
  }
  if (counter >= maxAttempts) {
    return { kind: 'mismatch', next: { ...v, counter, status: 'FAILED', failureReason: 'MAX_ATTEMPTS', updatedAt: now } };
  }
  return { kind: 'mismatch', next: { ...v, counter, updatedAt: now } };
}

/**
 * A dropped call verified with the whole caller id as the phone showed it (contract 9): E.164 (`+234 901 000
 * 1234`, or with 00 for the plus) or the local format (`0901 000 1234`), spaces, dashes, dots and brackets
 * allowed. It holds the code, so it is compared as one: in constant time.
 */
export function callerIdMatches(v: Verification, given: string): boolean {
  const compact = given.replace(/[\s\-().]/g, '');
  if (!/^(\+|00)?\d{5,17}$/.test(compact)) return false;
  const international = compact.startsWith('+') || compact.startsWith('00');
  const asE164 = `+${compact.replace(/^(\+|00)/, '')}`;
  const byE164 = v.pairedE164 !== null && codesMatch(v.pairedE164, asE164);
  // Digits alone may be either form; both are compared, so the time says nothing of which one matched.
  const byLocal = !international && codesMatch(v.pairedNumber, compact);
  return byE164 || byLocal;
}

/** The bounds of resending a code (contract 9). */
export interface ResendPolicy {
  /** OTP_MAX_SENDS: sends per verification, the first included. */
  readonly maxSends: number;
  /** PHONE_COOLDOWN_SECONDS: the least time between two sends. */
  readonly cooldownSeconds: number;
}

export type ResendDecision =
  /** Send the code again: `next` is the record with the send asked for and its delivery back to QUEUED. */
  | { readonly kind: 'resend'; readonly next: Verification }
  | { readonly kind: 'not-pending'; readonly current: Verification }
  /** Too soon after the last send, or no send left: retry after that many seconds (or never, within its life). */
  | { readonly kind: 'limited'; readonly reason: 'cooldown' | 'max-sends'; readonly retryAfterSeconds: number };

/** Decides a resend. Pure: the caller persists `next` and sends the code again through its channel. */
export function decideResend(v: Verification, now: Date, policy: ResendPolicy): ResendDecision {
  const current = asOf(v, now);
  if (current.status !== 'PENDING') return { kind: 'not-pending', current };
  const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - now.getTime()) / 1000));
  if (v.sendRequests >= policy.maxSends) {
    // No send is left for this verification: a new one can be asked for once it is over.
    return { kind: 'limited', reason: 'max-sends', retryAfterSeconds: secondsUntil(v.expiresAt.getTime()) };
  }
  const allowedAt = v.lastSendAt.getTime() + policy.cooldownSeconds * 1000;
  if (now.getTime() < allowedAt) return { kind: 'limited', reason: 'cooldown', retryAfterSeconds: secondsUntil(allowedAt) };
  return {
    kind: 'resend',
    next: {
      ...v,
      sendRequests: v.sendRequests + 1,
      lastSendAt: now,
      updatedAt: now,
      // Receipts of the earlier send no longer move the record: they are about a message that is not the latest.
      delivery: { ...v.delivery, provider: null, messageId: null, status: 'QUEUED', updatedAt: now },
    },
  };
}

/** Cancel (contract 9): a PENDING verification becomes FAILED, CANCELED. */
export function decideCancel(
  v: Verification,
  now: Date,
): { readonly kind: 'canceled'; readonly next: Verification } | { readonly kind: 'not-pending'; readonly current: Verification } {
  const current = asOf(v, now);
  if (current.status !== 'PENDING') return { kind: 'not-pending', current };
  return { kind: 'canceled', next: { ...v, status: 'FAILED', failureReason: 'CANCELED', updatedAt: now } };
}

/** Compares two codes in time that does not depend on where they differ, nor on their lengths. */
/**
 * Approve without a code (the Twilio-shaped surface's `Status=approved`, contract 15): the client vouches for
 * the user, as Twilio lets it; the attempt counter does not move.
 */
export function decideApprove(
  v: Verification,
  now: Date,
): { readonly kind: 'approved'; readonly next: Verification } | { readonly kind: 'not-pending'; readonly current: Verification } {
  const current = asOf(v, now);
  if (current.status !== 'PENDING') return { kind: 'not-pending', current };
  return { kind: 'approved', next: { ...v, status: 'SUCCESS', updatedAt: now } };
}

export function codesMatch(expected: string, given: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

/** A numeric code of `length` digits, each uniformly random. */
export function numericCode(randomInt: (max: number) => number, length: number): string {
  let code = '';
  for (let i = 0; i < length; i++) code += String(randomInt(10));
  return code;
}
