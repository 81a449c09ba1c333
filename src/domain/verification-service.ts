import { dispatched, type AfterCommit } from './after-commit.js';
import { untilNextUtcDay, type DailySends } from './daily-quota.js';
import { hasBudget, untilPeriodEnds, type BudgetRefusal, type Spend } from './budgets.js';
import type { Amount } from './money.js';
import { newCountryKey, untilNextHour, type WindowQuota } from './new-country.js';
import { abroadKey, abroadRoom, type AbroadPolicy } from './abroad.js';
import { channelOfDelivery, deliveryChannelOf, type Channel, type ChannelDriver } from './channel-driver.js';
import { decideThrottled, hasLocalRoom, throttledRoute, type ClientThrottle, type ResendThrottle, type Route, type Throttle, type ThrottledRoute } from './conversion.js';
import { destinationRefused, type DestinationPolicy } from './destination-rules.js';
import {
  allEnforced,
  allowedRisk,
  enforced,
  hear,
  judge,
  limitRule,
  riskOfSent,
  withLaterSend,
  type FactorEntry,
  type Objection,
  type RiskRule,
  type RuleMode,
  type RuleModes,
} from './risk.js';
import type { OutboxEvent } from './events.js';
import { decidePhoneLimit, phoneLookBackSeconds, type PhoneLimitPolicy } from './limits.js';
import { lockKeys } from './lock-keys.js';
import { eventsFor } from './outbox-events.js';
import type { ClientSettings } from './client-settings.js';
import type { NumberLists } from './number-lists.js';
import { captchaTokenSeconds, judgeCaptcha, type CaptchaSetting, type CaptchaTokenStore, type CaptchaVerifier } from './captcha.js';
import { nonGeographicRegion, parsePhone, shownTo } from './phone.js';
import { decidePrefix, prefixOf, type PrefixPolicy } from './prefix-velocity.js';
import type { Destination, Route as ProviderRoute } from './routes.js';
import type { Clock, Random } from './ports.js';
import { defaultFallback, fallbackProblem } from './fallback.js';
import { decideSignals, signalHistorySeconds, signalKeys, signalLocks, type SignalKey, type SignalKind, type SignalPolicy, type Signals } from './signals.js';
import { dueAgain } from './send-job.js';
import {
  asOf,
  decideApprove,
  decideCancel,
  decideResend,
  decideVerify,
  testNumberAttempt,
  testNumberDelivery,
  type RequestType,
  type ResendPolicy,
  type Verification,
} from './verification.js';
import type { Committed, VerificationStore, VerificationTx } from './verification-store.js';
import type { RefusalRecorder } from './verdicts.js';
import { decisionOf, type CustomerDecisions, type DecisionAnswer, type DecisionQuestion, type DecisionSetting } from './decision.js';
import { ringsTheNumber, stepPastForward, type CarrierChecks } from './carrier-checks.js';

/** The rules a verification lives by, from the settings. */
export interface VerificationPolicy {
  readonly ttlSeconds: number;
  readonly maxAttempts: number;
  readonly phoneLimit: PhoneLimitPolicy;
  readonly resend: ResendPolicy;
  /** Where codes may go at all (contract 10). */
  readonly destinations: DestinationPolicy;
  /** Sends a client may make per UTC day (CLIENT_DAILY_SEND_LIMIT); 0: no quota. */
  readonly clientDailySends: number;
  /** Creates towards one prefix, across all clients (contract 10). */
  readonly prefix: PrefixPolicy;
  /** Creates per end user's address, network and device, per client (contract 14). */
  readonly signals: SignalPolicy;
  /** NEW_COUNTRY_LIMIT_COUNT: a client's sends per UTC hour towards a country it has no verified code in; 0: none. */
  readonly newCountrySends: number;
  /** UNKNOWN_USER_RESENDS: resends of a code of a user with no verified history while the client's resends are throttled. */
  readonly unknownUserResends?: number;
  /** ABROAD_LIMIT_SHARE and ABROAD_LIMIT_MIN: unknown users from abroad towards a country, per hour; absent: no cap. */
  readonly abroad?: AbroadPolicy;
  /** The channels with a provider configured: a create of another channel's type is refused, never "sent". */
  readonly offered: ReadonlySet<Channel>;
  /** The request types a workflow's later steps may take here: the registry's, whose channel is offered (contract 13). */
  readonly fallbackTypes: readonly RequestType[];
  /** FALLBACK_AFTER_SECONDS, unless the client sets its own. */
  readonly fallbackAfterSeconds: number;
}

/** What a create decided before its transaction: what it sends, locks and counts, and whether it holds a send of the day's quota. */
interface CreatePlan {
  readonly channel: Channel;
  /** The E.164 number the code goes out from. */
  readonly sender: string;
  readonly locks: readonly string[];
  readonly serializeOn: readonly string[];
  /** The number is on an allow list. */
  readonly allowed: boolean;
  readonly prefix: string | null;
  readonly throttle: Throttle | null;
  readonly clientThrottle: ClientThrottle | null;
  readonly counted: readonly SignalKey[];
  /** False: CLIENT_DAILY_SEND_LIMIT is reached (no share left to spend). */
  readonly sendTaken: boolean;
  /** Towards a country new to the client: whether NEW_COUNTRY_LIMIT_COUNT had room; null: not a new country. */
  readonly newCountryTaken: boolean | null;
  /** From an address abroad: whether ABROAD_LIMIT_SHARE had room; null: not from abroad, or no cap. */
  readonly abroadTaken: boolean | null;
  /** The client's budget has no room for this send (contract 17): the period it would pass; null: it has. */
  readonly overBudget: BudgetRefusal | null;
  /**
   * The client's CAPTCHA asks only under a throttle (`--captcha-when throttled`): `passed` a token was accepted,
   * which lets the create past throttles and the new-country limit; `ask` none came, so their refusal is 403
   * CAPTCHA_REQUIRED; null: no such CAPTCHA.
   */
  readonly challenge: 'passed' | 'ask' | null;
  /** A CAPTCHA was asked and passed (the verdict `challenge`). */
  readonly captchaPassed: boolean;
  /** The factors of the rules heard before the transaction (each in shadow: an enforced one refused the create). */
  readonly heard: readonly FactorEntry[];
  /** Each rule's mode for the create's client. */
  readonly modeOf: (rule: RiskRule) => RuleMode;
}

/** What a create or resend holds of its client's budget (`held`), or the period it would pass (`over`). */
interface BudgetHold {
  readonly held: Amount | null;
  readonly over: BudgetRefusal | null;
}

/** A create's verified history is read back this far: a user who verified within it is a known user. */
export const verifiedHistoryDays = 30;

/** How long an Idempotency-Key is remembered (contract 3.1). */
export const idempotencySeconds = 24 * 60 * 60;

export interface CreateRequest {
  readonly clientId: string;
  readonly countryCode: string;
  readonly phoneNumber: string;
  readonly type: RequestType;
  readonly webhookUrl: string | null;
  readonly reference: string | null;
  /** BCP 47, canonical: the language of the SMS text (contract 9); null: the client's default, then English. */
  readonly locale: string | null;
  /** The workflow's later steps (contract 13), as given; null: none given, the client's default applies. */
  readonly fallback: readonly string[] | null;
  /** The Idempotency-Key and a fingerprint of the request body, when the client sent a key. */
  readonly idempotency: { readonly key: string; readonly fingerprint: string } | null;
  /** The end user as the client's backend saw them (contract 14); null when not given. */
  readonly signals?: Signals | null;
  /** The CAPTCHA widget's token (contract 14), for a client that has a CAPTCHA; null when not given. */
  readonly captchaToken?: string | null;
  /** The caller's own SMS text with `{{code}}` (contract 15, CAMARA); absent: the client's templates. */
  readonly messageText?: string | null;
  /**
   * A code an auth server made (contract 15's relays): sent as is, never verified here, and held by every limit
   * but the per-number ones (the auth server decides when to send again).
   */
  readonly relayedCode?: string | null;
}

/** The limits a create is refused by (429). */
export type CreateLimit = 'phone' | 'daily-quota' | 'budget' | 'conversion' | 'new-country' | 'abroad' | SignalKind;

export type CreateOutcome =
  | { readonly kind: 'created'; readonly verification: Verification }
  /** The same Idempotency-Key and body again: the first response, nothing sent. */
  | { readonly kind: 'replayed'; readonly verification: Verification }
  | { readonly kind: 'invalid-phone' }
  /** `fallback` names what this service cannot take as a later step (contract 13): `issue` says what. */
  | { readonly kind: 'invalid-fallback'; readonly issue: string }
  /** The type's channel has no provider here (its setting is unset beside other channels' providers). */
  | { readonly kind: 'channel-not-offered'; readonly channel: Channel }
  /** The number's route (contract 17) names only providers not configured here for its channel. */
  | { readonly kind: 'route-not-served'; readonly channel: Channel; readonly route: Pick<ProviderRoute, 'destination' | 'providers'> }
  /** The destination is refused (contract 10): `detail` says which rule and what it refused. */
  | {
      readonly kind: 'not-allowed';
      /** `call-forwarding`: a call's code to a forwarded line, with no workflow step that does not ring (contract 18). */
      readonly rule: 'destination' | 'prefix' | 'decision' | 'call-forwarding';
      readonly detail: string;
      readonly factors: readonly FactorEntry[];
    }
  /** The number is on a block list (contract 14): `value` is the listed number or prefix it falls under. */
  | { readonly kind: 'blocked'; readonly value: string; readonly factors: readonly FactorEntry[] }
  /**
   * `phone`: the number's own limits; `daily-quota`: the client's CLIENT_DAILY_SEND_LIMIT; `conversion`: the
   * country is throttled to the prefix limit for its low conversion (contract 10).
   */
  | {
      readonly kind: 'rate-limited';
      readonly reason: CreateLimit;
      readonly retryAfterSeconds: number;
      /** `budget`: the period whose limit the send would have passed, and what is spent in it (contract 17). */
      readonly budget?: BudgetRefusal;
      /** `conversion` of a throttled country: its country and, where the throttle is one network's, that network. */
      readonly throttled?: ThrottledRoute;
      /** Why the send was judged risky (contract 18): the rule that refused it and its factor. */
      readonly factors: readonly FactorEntry[];
    }
  | { readonly kind: 'idempotency-key-reused' }
  | CaptchaRefusal;

/**
 * The client has a CAPTCHA: `required` no token came, `failed` it was refused or used before, `unavailable` its
 * provider did not answer (no factor: nothing was judged). `factors`: the CAPTCHA's, or the throttle's that asked for it.
 */
export interface CaptchaRefusal {
  readonly kind: 'captcha';
  readonly outcome: 'required' | 'failed' | 'unavailable';
  readonly factors: readonly FactorEntry[];
}

/** A CAPTCHA not passed: its factor, unless its provider did not answer. */
function captchaRefusal(outcome: CaptchaRefusal['outcome']): CaptchaRefusal {
  return { kind: 'captcha', outcome, factors: outcome === 'unavailable' ? [] : [enforced('captcha')] };
}

/**
 * Which limit refused a create: `destination` a country or line type, `prefix` a blocked prefix, `ip` the end
 * user's address or its network, `device` their device, `blocked` a block list (contract 14).
 */
export type CreateRefusal = 'captcha' | 'destination' | 'prefix' | 'decision' | 'call-forwarding' | 'blocked' | 'phone' | 'daily-quota' | 'budget' | 'conversion' | 'new-country' | 'abroad' | 'ip' | 'device';

export type VerifyOutcome =
  | { readonly kind: 'success'; readonly verification: Verification }
  | { readonly kind: 'mismatch'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | { readonly kind: 'not-found' };

/**
 * Why a resend was refused: the code's own limits (cool-down, OTP_MAX_SENDS), the day's quota, the new-country
 * cap, or `unknown-user`: the client's resends are throttled (MIN_RESEND_SAMPLE) and the code's user has no
 * verified history; `captcha`: the same for a client with `--captcha-when throttled`, asked for a CAPTCHA
 * instead, or one whose token failed.
 */
export type ResendRefusal = 'cooldown' | 'max-sends' | 'daily-quota' | 'budget' | 'new-country' | 'unknown-user' | 'captcha' | 'call-forwarding' | 'decision';

/** The limits a resend is refused by (429). */
type ResendLimit = Exclude<ResendRefusal, 'captcha' | 'call-forwarding' | 'decision'>;

export type ResendOutcome =
  | { readonly kind: 'resent'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | {
      readonly kind: 'rate-limited';
      readonly reason: ResendLimit;
      readonly retryAfterSeconds: number;
      readonly budget?: BudgetRefusal;
      readonly factors: readonly FactorEntry[];
    }
  | CaptchaRefusal
  | SendNotAllowed
  | { readonly kind: 'not-found' };

/**
 * A send refused by the number's network or the client's own say (contract 18): a call's code to a forwarded line
 * with no step that does not ring (`call-forwarding`), or the client's decision webhook (`decision`).
 */
export interface SendNotAllowed {
  readonly kind: 'not-allowed';
  readonly rule: 'call-forwarding' | 'decision';
  readonly detail: string;
  readonly factors: readonly FactorEntry[];
}

export type ApproveOutcome =
  | { readonly kind: 'approved'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | { readonly kind: 'not-found' };

export type CancelOutcome =
  | { readonly kind: 'canceled'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | { readonly kind: 'not-found' };

/** Told of every verification created (metrics); the ones that end are seen in the events committed. */
export interface VerificationObserver {
  verificationCreated(type: Verification['type'], countryCode: string): void;
  /** A create refused by a fraud, cost or phone limit (contract 6, 10). */
  createRefused(reason: CreateRefusal): void;
  /** A resend refused by a limit (contract 9, 14). */
  resendRefused?(reason: ResendRefusal): void;
  /** The risk factors a create or resend was refused for (contract 18). */
  riskFactors?(factors: readonly FactorEntry[]): void;
  /** What a client's decision webhook answered (contract 18). */
  decisionAnswered?(answer: DecisionAnswer): void;
}

export interface VerificationServiceDeps {
  readonly store: VerificationStore;
  readonly policy: VerificationPolicy;
  /** The driver of each request type. */
  readonly channels: (type: RequestType) => ChannelDriver;
  readonly afterCommit: AfterCommit;
  readonly clock: Clock;
  readonly random: Random;
  readonly observer?: VerificationObserver;
  /** A client's settings, from the client directory's cache (contract 9). */
  readonly clientSettings: (clientId: string) => Promise<ClientSettings>;
  /** Countries throttled for their conversion (contract 10), and the provider a channel's first send goes to. */
  readonly conversion?: {
    throttleOn(route: Route, now: Date): Throttle | null;
    /** The throttle on a client for its conversion across all countries (contract 14). */
    clientThrottleOn?(clientId: string, now: Date): ClientThrottle | null;
    /** The throttle on a client's resends to users with no verified history (MIN_RESEND_SAMPLE). */
    resendThrottleOn?(clientId: string, now: Date): ResendThrottle | null;
    /** Whether the client had a code verified in the country lately (NEW_COUNTRY_LIMIT_COUNT). */
    knowsCountry?(clientId: string, regionCode: string): boolean;
    /** Codes verified in the country over the last hour, across clients, as last read (ABROAD_LIMIT_SHARE's room). */
    verifiedIn?(regionCode: string): number;
    firstProvider(channel: Channel, to: Destination): string;
  };
  /**
   * CLIENT_DAILY_SEND_LIMIT's admissions, shared by every instance (a QuotaLimiter over the day's shares): taken
   * before a create's or resend's transaction, so that no create of a client waits on another's lock.
   */
  readonly dailySends?: DailySends;
  /**
   * Budgets (contract 17): what a budgeted client's sends hold and cost in the UTC day and month, shared by every
   * instance; absent: budgets are not enforced.
   */
  readonly spend?: Spend;
  /** What a send of `channel` to `to` holds of a budget: its first provider's price there, else the channel's highest. */
  readonly sendPrice?: (channel: Channel, to: Destination) => Amount;
  /** NEW_COUNTRY_LIMIT_COUNT's hourly quotas, shared by every instance (a QuotaLimiter of one send a share). */
  readonly newCountrySends?: WindowQuota;
  /** ABROAD_LIMIT_SHARE's hourly quotas per country, shared by every instance; their room is the caller's. */
  readonly abroadSends?: WindowQuota;
  /** Checks CAPTCHA tokens with their providers and remembers those accepted (contract 14). */
  readonly captcha?: { readonly verifier: CaptchaVerifier; readonly tokens: CaptchaTokenStore; readonly failOpen: boolean };
  /** Asks a client's backend before a send, for a client with a decision webhook (contract 18); absent: none asked. */
  readonly decisions?: CustomerDecisions;
  /** The carrier checks configured here (contract 18); absent: none is asked. */
  readonly carrierChecks?: CarrierChecks;
  /**
   * The mobile network a number's range was given to, from the number metadata on the machine (its carrier; null:
   * the data names none); absent: not known, and conversion is judged per country alone.
   */
  readonly networkOf?: (phone: { readonly e164: string; readonly countryCode: string }) => Promise<string | null>;
  /** Where creates refused by a rule are recorded, for the verdicts (contract 18); absent: not recorded. */
  readonly refusals?: Pick<RefusalRecorder, 'refused'>;
  /** The risk rules' modes in force (contract 18), as this process last read them; absent: every rule enforces. */
  readonly ruleModes?: () => RuleModes;
  /** The block and allow lists in force (contract 14), as this process last read them. */
  readonly lists?: () => NumberLists;
  /** A test number's code (create or resend) reaches no provider; it is recorded here, for the development inbox. */
  readonly testSends?: (v: Verification) => Promise<void>;
  /**
   * The provider a channel's sends to a number go to first (its route's first, else the head of SMS_PROVIDER /
   * CALL_PROVIDER...), named on each job so that only a process with it configured takes the job; null (or
   * absent): the job names none.
   */
  readonly firstProvider?: (channel: Channel, to: Destination) => string | null;
  /**
   * The route a channel's sends to a number take when none of its providers is configured here (a route set by a
   * process with other settings), so that the create is refused rather than its code left unsent; null: served.
   */
  readonly unservedRoute?: (channel: Channel, to: Destination) => Pick<ProviderRoute, 'destination' | 'providers'> | null;
  /** The country (ISO 3166-1 alpha-2) an end user's address is in, null when unknown (IP_COUNTRY_DATABASE); absent: off. */
  readonly addressCountry?: (address: string) => string | null;
}

/**
 * Every state change of a verification, each one transaction script: decide with pure rules, write the change
 * with its events and send jobs through one transaction, then hand what committed to the after-commit
 * dispatcher. Reads are here too.
 */
export class VerificationService {
  constructor(private readonly deps: VerificationServiceDeps) {}

  /** Create (contract 3.1): a new PENDING verification and its send job, if the number's limits allow. */
  async create(request: CreateRequest): Promise<CreateOutcome> {
    const { store, policy, clock, random } = this.deps;
    const phone = parsePhone(request.countryCode, request.phoneNumber);
    if (!phone) return { kind: 'invalid-phone' };
    const driver = this.deps.channels(request.type);
    if (!policy.offered.has(driver.channel)) return { kind: 'channel-not-offered', channel: driver.channel };
    if (request.fallback !== null) {
      const issue = fallbackProblem(request.type, request.fallback, policy.fallbackTypes);
      if (issue) return { kind: 'invalid-fallback', issue };
    }
    const settings = await this.deps.clientSettings(request.clientId);
    // The CAPTCHA before anything else is read, written or counted: a create without a human refuses nothing else.
    // A relayed code comes from an auth server, not from a page: it has no widget, and that server guards its own.
    // `throttled`: a token that comes is checked as always; without one, a throttle's refusal asks for one.
    // Each rule in its mode for this client (contract 18): the factors of rules in shadow are heard and kept.
    const refusedNumber = { clientId: request.clientId, phoneNumber: phone.e164 };
    const modes = this.deps.ruleModes?.() ?? allEnforced;
    const modeOf = (rule: RiskRule) => modes.modeOf(rule, request.clientId);
    const heard: FactorEntry[] = [];
    const refuses = (rule: RiskRule) => hear(rule, modeOf(rule), heard);
    let challenge: CreatePlan['challenge'] = null;
    let captchaPassed = false;
    if (settings.captcha && !request.relayedCode && modeOf('captcha') !== 'off') {
      const token = request.captchaToken ?? null;
      if (settings.captcha.when === 'always' || token !== null) {
        const captcha = await this.checkCaptcha(settings.captcha, token, request.signals?.ip?.address ?? null);
        captchaPassed = captcha === 'passed';
        if (captcha !== 'passed' && (captcha === 'unavailable' || refuses('captcha'))) {
          if (captcha !== 'unavailable') this.deps.observer?.createRefused('captcha');
          return this.judged(captchaRefusal(captcha), refusedNumber);
        }
      }
      // A token refused in shadow mode leaves the create as if the client had no CAPTCHA.
      if (settings.captcha.when === 'throttled') challenge = token === null ? 'ask' : captchaPassed ? 'passed' : null;
    }
    const refused = destinationRefused(phone, policy.destinations, settings.allowedCountries);
    if (refused && refuses(refused.rule)) {
      this.deps.observer?.createRefused('destination');
      return this.judged({ kind: 'not-allowed', rule: 'destination', detail: refused.detail, factors: heard }, refusedNumber);
    }
    const lists = this.deps.lists?.();
    const blocked = lists?.blockedBy(phone.e164, request.clientId) ?? null;
    if (blocked !== null && refuses('lists')) {
      this.deps.observer?.createRefused('blocked');
      return this.judged({ kind: 'blocked', value: blocked, factors: heard }, refusedNumber);
    }
    // An allowed number skips the per-number, prefix, signal and conversion limits; not the daily quota.
    const allowed = lists?.allows(phone.e164, request.clientId) ?? false;
    const testCode = settings.testNumbers[phone.e164] ?? null;
    // A client's default is copied onto the verification: a later change of it does not move this one.
    const workflow = (request.fallback as readonly RequestType[] | null) ?? defaultFallback(request.type, settings.fallback, policy.fallbackTypes);
    // The number's network is asked before anything is taken or written; a test number's or an allowed one's never.
    let steps = 0;
    if (testCode === null && !allowed) {
      const challengeable = settings.captcha !== null && !request.relayedCode && modeOf('captcha') === 'enforce';
      const carrier = await this.askCarrier(ringsTheNumber(request.type), phone.e164, workflow, { challengeable, passed: captchaPassed }, modeOf, heard);
      if (carrier.kind === 'refused') {
        this.deps.observer?.createRefused(carrier.outcome.kind === 'captcha' ? 'captcha' : 'call-forwarding');
        return this.judged(carrier.outcome, refusedNumber);
      }
      steps = carrier.steps;
    }
    // A call's code to a forwarded line goes out through the workflow's step instead, as a later step would go.
    const stepType = steps > 0 ? workflow[steps - 1] : undefined;
    const sendDriver = stepType === undefined ? driver : this.deps.channels(stepType);
    // A test number's code reaches no provider, whatever its route.
    const unserved = testCode === null ? (this.deps.unservedRoute?.(sendDriver.channel, { id: '', phoneNumber: phone.e164, regionCode: phone.region }) ?? null) : null;
    if (unserved !== null) return { kind: 'route-not-served', channel: sendDriver.channel, route: unserved };
    const now = clock.now();
    const relayedCode = request.relayedCode ?? null;
    const { otp, from } = driver.newCode(random, testCode ?? relayedCode);
    // A test number's code reaches no network: conversion never reads it.
    const network = testCode === null ? ((await this.deps.networkOf?.(phone)) ?? null) : null;
    const channel = deliveryChannelOf(sendDriver.channel);
    const verification: Verification = {
      id: random.uuid(),
      clientId: request.clientId,
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + policy.ttlSeconds * 1000),
      otp,
      phoneNumber: phone.e164,
      countryCode: phone.countryCode,
      counter: 0,
      pairedNumber: shownTo(from, phone),
      pairedE164: from.e164,
      type: driver.type,
      status: 'PENDING',
      webhookUrl: request.webhookUrl ?? settings.defaultWebhookUrl,
      reference: request.reference,
      failureReason: null,
      sendRequests: 1,
      lastSendAt: now,
      locale: request.locale,
      codeWithheld: !settings.revealCode,
      testNumber: testCode !== null,
      regionCode: phone.region ?? nonGeographicRegion,
      ...(network !== null && { network }),
      ...(request.messageText && { messageText: request.messageText }),
      ...(relayedCode !== null && testCode === null && { relayed: true }),
      delivery:
        testCode === null
          ? { channel, provider: null, messageId: null, status: 'QUEUED', sends: 0, updatedAt: now }
          : testNumberDelivery(channel, 1, now),
      deliveries: testCode === null ? [] : [testNumberAttempt(channel, now)],
      // A test number's code reaches no provider, so no step could fail or be sent: it has no workflow.
      workflow: testCode === null ? workflow : [],
      fallbackAfterSeconds: settings.fallbackAfterSeconds ?? policy.fallbackAfterSeconds,
      nextStepAt: null,
      failoverAt: null,
      steps,
    };
    // The client's own say (contract 18), before anything is taken, counted or written: a deny leaves nothing behind.
    if (settings.decision && testCode === null) {
      const signals = request.signals ?? null;
      const denied = await this.decided(request.clientId, settings.decision, modeOf, heard, {
        id: verification.id,
        phoneNumber: phone.e164,
        countryCode: phone.countryCode,
        channel,
        reference: request.reference,
        signals: { ip: signals?.ip?.address ?? null, deviceId: signals?.deviceId ?? null, platform: signals?.platform ?? null },
        risk: riskOfSent(heard, captchaPassed),
      });
      if (denied !== null) {
        this.deps.observer?.createRefused('decision');
        return this.judged(denied, refusedNumber);
      }
    }
    const { idempotency } = request;
    // A send of the day's quota is taken before the transaction (one short statement now and then, never a lock)
    // and given back if the create is refused after all.
    const dailySends = policy.clientDailySends > 0 && !verification.testNumber ? (this.deps.dailySends ?? null) : null;
    const prefix = policy.prefix.count > 0 && !verification.testNumber && !allowed ? prefixOf(phone.e164) : null;
    // Throttled to the prefix limit: with prefix velocity off there is none to throttle to.
    const throttle = prefix !== null ? this.throttleOn(verification, sendDriver.channel, now) : null;
    // Capped at the prefix limit too, as a throttled country is: with prefix velocity off there is none.
    const clientThrottle = prefix !== null ? (this.deps.conversion?.clientThrottleOn?.(request.clientId, now) ?? null) : null;
    const signals = request.signals ?? null;
    const counted = verification.testNumber || allowed ? [] : signalKeys(signals, policy.signals);
    const locks = [
      ...signalLocks(counted).map((k) => lockKeys.signal(request.clientId, k.kind, k.value)),
      lockKeys.phone(request.clientId, phone.e164),
      ...(prefix !== null ? [lockKeys.prefix(prefix)] : []),
      ...(throttle !== null ? [lockKeys.country(throttle)] : []),
      ...(clientThrottle !== null ? [lockKeys.clientThrottle(request.clientId)] : []),
    ];
    const serializeOn = [...locks, ...(idempotency ? [`key|${request.clientId}|${idempotency.key}`] : [])];
    const sendTaken = dailySends === null ? true : await dailySends.tryAcquire(request.clientId);
    const newCountry = allowed ? null : this.newCountryOf(verification);
    const newCountryTaken = newCountry === null ? null : await newCountry.quota.tryAcquire(newCountry.key);
    const abroad = allowed || verification.testNumber || modeOf('abroad') === 'off' ? null : this.abroadOf(verification, signals?.ip?.address ?? null);
    const abroadTaken = abroad === null ? null : await abroad.quota.tryAcquire(abroad.key, abroad.room);
    // Held as the day's quota is taken, before the transaction, and given back the same way.
    let budget: BudgetHold = { held: null, over: null };
    const giveBack = async () => {
      if (dailySends !== null && sendTaken) dailySends.release(request.clientId);
      if (newCountry !== null && newCountryTaken) newCountry.quota.release(newCountry.key);
      if (abroad !== null && abroadTaken) abroad.quota.release(abroad.key);
      if (budget.held !== null) await this.releaseHold(verification.id, budget.held);
    };
    try {
      if (!verification.testNumber) budget = await this.holdBudget(request.clientId, verification.id, settings, sendDriver.channel, verification, now);
    } catch (err) {
      await giveBack();
      throw err;
    }
    let committed;
    try {
      committed = await this.createIn(request, verification, {
        channel: sendDriver.channel,
        // A step's sender for the create's own code, as a later step's is made.
        sender: sendDriver === driver ? from.e164 : sendDriver.newCode(random, otp).from.e164,
        locks,
        serializeOn,
        allowed,
        prefix,
        throttle,
        clientThrottle,
        counted,
        sendTaken,
        newCountryTaken,
        abroadTaken,
        overBudget: budget.over,
        challenge,
        captchaPassed,
        heard,
        modeOf,
      });
    } catch (err) {
      await giveBack();
      throw err;
    }
    if (committed.value.kind === 'captcha') this.deps.observer?.createRefused('captcha');
    // A refused create counts toward no limit: the sends it took are given back.
    if (committed.value.kind !== 'created') await giveBack();
    const outcome = dispatched(this.deps.afterCommit, committed);
    if (outcome.kind === 'not-allowed') this.deps.observer?.createRefused(outcome.rule);
    if (outcome.kind === 'rate-limited') this.deps.observer?.createRefused(outcome.reason === 'network' ? 'ip' : outcome.reason);
    if (outcome.kind === 'created') {
      this.deps.observer?.verificationCreated(outcome.verification.type, outcome.verification.countryCode);
      if (outcome.verification.testNumber) await this.deps.testSends?.(outcome.verification);
    }
    return this.judged(outcome, refusedNumber);
  }

  /** A create's one transaction script: lock, read, decide, write. */
  private createIn(request: CreateRequest, verification: Verification, plan: CreatePlan): Promise<Committed<CreateOutcome>> {
    const { store, policy } = this.deps;
    const { locks, serializeOn, allowed, prefix, throttle, clientThrottle, counted, sendTaken, newCountryTaken, abroadTaken, overBudget, challenge, modeOf } = plan;
    const now = verification.createdAt;
    const phone = { e164: verification.phoneNumber };
    const { idempotency } = request;
    const signals = request.signals ?? null;
    return store.transaction(async (tx): Promise<CreateOutcome> => {
      // The lock comes first in every create, so that a group of them takes its locks in one sorted statement.
      await tx.lock(locks);
      if (idempotency) {
        const claim = await tx.claimIdempotencyKey(
          request.clientId,
          idempotency.key,
          idempotency.fingerprint,
          verification.id,
          now,
          secondsBefore(now, idempotencySeconds),
        );
        if (claim.kind === 'existing') return this.replay(tx, request.clientId, idempotency.fingerprint, claim);
      }
      if (verification.testNumber) {
        // Counts toward no limit, and sends nothing.
        tx.insert(verification, signals);
        return { kind: 'created', verification };
      }
      const history = await tx.phoneHistory({
        clientId: request.clientId,
        phoneNumber: phone.e164,
        lookBackFrom: secondsBefore(now, phoneLookBackSeconds(policy.phoneLimit)),
        windowFrom: secondsBefore(now, policy.phoneLimit.windowSeconds),
        prefix: prefix === null ? null : { prefix, since: secondsBefore(now, policy.prefix.windowSeconds), now },
        // A throttle counts only the creates made under it, as a lifted block counts only those after it.
        throttled: throttle && {
          regionCode: throttle.regionCode,
          countryCode: throttle.countryCode,
          network: throttle.network,
          since: latest(secondsBefore(now, policy.prefix.windowSeconds), throttle.throttledAt),
        },
        clientThrottled: clientThrottle && { since: latest(secondsBefore(now, policy.prefix.windowSeconds), clientThrottle.throttledAt) },
        signals: { keys: counted, since: secondsBefore(now, policy.signals.windowSeconds), historySince: secondsBefore(now, signalHistorySeconds) },
        // Only a create a throttle or the new-country cap may refuse asks whether it is a known user's.
        verifiedSince:
          throttle !== null || clientThrottle !== null || newCountryTaken === false || abroadTaken === false
            ? {
                ip: signals?.ip?.address ?? null,
                network: signals?.ip?.network ?? null,
                device: signals?.deviceId ?? null,
                since: secondsBefore(now, verifiedHistoryDays * 86_400),
              }
            : null,
      });
      const heard = [...plan.heard];
      if (prefix !== null && history.prefix !== null && modeOf('prefix') !== 'off') {
        const decision = decidePrefix(history.prefix, now, policy.prefix);
        // In shadow mode the prefix is not blocked: the factor is heard and the create goes on.
        if (decision.kind === 'blocked' && hear('prefix', modeOf('prefix'), heard)) {
          // The block commits with the refusal; the refused create itself leaves nothing else behind.
          if (decision.newBlock) tx.blockPrefix(prefix, now, decision.until);
          if (idempotency) await tx.releaseIdempotencyKey(request.clientId, idempotency.key);
          return {
            kind: 'not-allowed',
            rule: 'prefix',
            detail: `the prefix ${prefix} (numbers ${prefix}000 to ${prefix}999) is blocked until ${decision.until.toISOString()}: too many verifications towards it (PREFIX_LIMIT_COUNT)`,
            factors: heard,
          };
        }
      }
      // A number, address, network or device with a verified code is a known user's: a throttle falls on the
      // attack, not on them, and a new country is not new to them.
      const known = history.verifiedBefore || challenge === 'passed';
      // A user whose address is in their number's country keeps some room under a country throttle, an attack's
      // proxies abroad do not. A client that asks a CAPTCHA keeps none: a person passes it, a script does not, and
      // an attack from proxies in the country would take the room.
      const plainCountry = history.throttled && !known ? decideThrottled(history.throttled, now, policy.prefix) : { allowed: true as const };
      const localRoom =
        !plainCountry.allowed &&
        history.throttled !== null &&
        challenge !== 'ask' &&
        this.whereFrom(signals?.ip?.address ?? null, verification.regionCode) === 'local' &&
        hasLocalRoom(history.throttled, policy.prefix);
      const countryThrottled = localRoom ? { allowed: true as const } : plainCountry;
      const throttled = known
        ? countryThrottled
        : !countryThrottled.allowed
        ? countryThrottled
        : history.clientThrottled
          ? decideThrottled(history.clientThrottled, now, policy.prefix)
          : countryThrottled;
      // A relayed code is sent when its auth server says: the number's own limits are that server's to keep.
      const phoneLimit = allowed || verification.relayed ? { allowed: true as const } : decidePhoneLimit(history.phone, now, policy.phoneLimit);
      const signalled = decideSignals(counted, history.signals, now, policy.signals.windowSeconds);
      type Refusal = { readonly reason: CreateLimit; readonly retryAfterSeconds: number; readonly budget?: BudgetRefusal; readonly throttled?: ThrottledRoute };
      const limit = (reason: CreateLimit, retryAfterSeconds: number, more: Pick<Refusal, 'budget' | 'throttled'> = {}): Objection<Refusal>[] => [
        { rule: limitRule(reason), refusal: { reason, retryAfterSeconds, ...more } },
      ];
      const objections = [
        ...(!signalled.allowed ? limit(signalled.kind, signalled.retryAfterSeconds) : []),
        ...(!throttled.allowed
          ? limit('conversion', throttled.retryAfterSeconds, throttle !== null && !countryThrottled.allowed ? { throttled: throttledRoute(throttle) } : {})
          : []),
        ...(newCountryTaken === false && !known ? limit('new-country', untilNextHour(now)) : []),
        ...(abroadTaken === false && !known ? limit('abroad', untilNextHour(now)) : []),
        ...(!phoneLimit.allowed ? limit('phone', phoneLimit.retryAfterSeconds) : []),
        ...(!sendTaken ? limit('daily-quota', untilNextUtcDay(now)) : []),
        ...(overBudget !== null ? limit('budget', untilPeriodEnds(overBudget.period, now), { budget: overBudget }) : []),
      ];
      const refusal = judge(objections, modeOf, heard);
      if (refusal) {
        // A refused create leaves nothing behind, its key included.
        if (idempotency) await tx.releaseIdempotencyKey(request.clientId, idempotency.key);
        // A person can pass a throttle where a script cannot: the client's CAPTCHA is asked for before refusing.
        if (challenge === 'ask' && (refusal.reason === 'conversion' || refusal.reason === 'new-country' || refusal.reason === 'abroad')) return { kind: 'captcha', outcome: 'required', factors: heard };
        return { kind: 'rate-limited', ...refusal, factors: heard };
      }
      const risk = riskOfSent(heard, plan.captchaPassed);
      if (risk !== allowedRisk) verification = { ...verification, risk };
      tx.insert(verification, signals, localRoom);
      const claimedUntil = this.deps.afterCommit.claimUntil('send', now);
      // A claimed job's first attempt is under way as it is written.
      const job = {
        verificationId: verification.id,
        channel: plan.channel,
        sender: plan.sender,
        status: 'pending',
        attempts: claimedUntil ? 1 : 0,
        provider: this.deps.firstProvider?.(plan.channel, verification) ?? null,
        providerFailures: 0,
        dueAt: now,
        claimedUntil,
        lastError: null,
        createdAt: now,
      } as const;
      tx.enqueueSend(job, verification);
      return { kind: 'created', verification };
    }, serializeOn);
  }

  /**
   * The carrier checks of a create or resend (contract 18), asked together. A recent SIM swap is a challenge: a
   * client whose CAPTCHA enforces has the send pass it (a `throttled` one without a token is asked for it), and one
   * without hears the rule as in shadow. A forwarded line takes a call's code (`rings`) to the workflow's first step
   * that does not ring (`steps`), else refuses it. A check that failed or timed out lets the send through.
   */
  private async askCarrier(
    rings: boolean,
    e164: string,
    workflow: readonly RequestType[],
    captcha: { readonly challengeable: boolean; readonly passed: boolean },
    modeOf: (rule: RiskRule) => RuleMode,
    heard: FactorEntry[],
  ): Promise<{ readonly kind: 'refused'; readonly outcome: CaptchaRefusal | SendNotAllowed } | { readonly kind: 'go'; readonly steps: number }> {
    const { simSwap, callForwarding } = this.deps.carrierChecks ?? {};
    const simSwapMode = modeOf('sim-swap');
    const forwardMode = modeOf('call-forwarding');
    const [swapped, forwarded] = await Promise.all([
      simSwap && simSwapMode !== 'off' ? simSwap.outcome(e164) : null,
      callForwarding && forwardMode !== 'off' && rings ? callForwarding.outcome(e164) : null,
    ]);
    if (swapped === 'flagged' && hear('sim-swap', simSwapMode === 'enforce' && !captcha.challengeable ? 'shadow' : simSwapMode, heard) && !captcha.passed) {
      return { kind: 'refused', outcome: { kind: 'captcha', outcome: 'required', factors: [...heard] } };
    }
    if (forwarded !== 'flagged' || !hear('call-forwarding', forwardMode, heard)) return { kind: 'go', steps: 0 };
    const steps = stepPastForward(workflow);
    if (steps !== null) return { kind: 'go', steps };
    const detail = "the number's calls are forwarded (unconditional call forwarding is active): the code would ring elsewhere";
    return { kind: 'refused', outcome: { kind: 'not-allowed', rule: 'call-forwarding', detail, factors: [...heard] } };
  }

  /**
   * The carrier checks of a resend (contract 18), before its transaction: as a create's, on the channel the code
   * goes through now (a resend cannot switch channel, so a call to a forwarded line is refused). A test number's
   * and an allowed number's are not asked. A SIM swap asks the client's CAPTCHA: a token the resend carried that
   * was not checked yet is checked now, and the checks heard again (their answers are kept: nothing more is asked).
   */
  private async askCarrierOnResend(
    v: Verification,
    settings: ClientSettings,
    captcha: { readonly token: string | null; readonly passed: boolean },
    modeOf: (rule: RiskRule) => RuleMode,
    heard: FactorEntry[],
  ): Promise<CaptchaRefusal | SendNotAllowed | null> {
    if (v.status !== 'PENDING' || v.testNumber || (this.deps.lists?.().allows(v.phoneNumber, v.clientId) ?? false)) return null;
    const rings = v.delivery.channel === 'CALL' || v.delivery.channel === 'VOICE';
    const challengeable = settings.captcha !== null && !v.relayed && modeOf('captcha') === 'enforce';
    const asked = await this.askCarrier(rings, v.phoneNumber, [], { challengeable, passed: captcha.passed }, modeOf, heard);
    if (asked.kind === 'go') return null;
    if (asked.outcome.kind !== 'captcha' || captcha.passed || captcha.token === null || settings.captcha === null) return asked.outcome;
    const checked = await this.checkCaptcha(settings.captcha, captcha.token, null);
    if (checked !== 'passed') return captchaRefusal(checked);
    heard.length = 0;
    const again = await this.askCarrier(rings, v.phoneNumber, [], { challengeable, passed: true }, modeOf, heard);
    return again.kind === 'go' ? null : again.outcome;
  }

  /**
   * The client's own say on a send (contract 18): its decision webhook asked, unless the rule is off; a refusal when
   * it denies (or gave no answer and its default is deny) and the rule enforces; null: the send goes.
   */
  private async decided(
    clientId: string,
    setting: DecisionSetting,
    modeOf: (rule: RiskRule) => RuleMode,
    heard: FactorEntry[],
    question: DecisionQuestion,
  ): Promise<SendNotAllowed | null> {
    if (!this.deps.decisions || modeOf('decision') === 'off') return null;
    const answer = await this.deps.decisions.ask(clientId, setting, question);
    this.deps.observer?.decisionAnswered?.(answer);
    if (decisionOf(answer, setting) !== 'deny' || !hear('decision', modeOf('decision'), heard)) return null;
    const detail = answer === 'deny' ? "the client's decision webhook denied this send" : `the client's decision webhook gave no answer (${answer}) and its default is deny`;
    return { kind: 'not-allowed', rule: 'decision', detail, factors: [...heard] };
  }

  /**
   * A token checked with the client's provider, then taken for good (across instances): a token the provider
   * accepted but this service already took is a repeat. A provider that does not answer lets the create through
   * only with CAPTCHA_FAIL_OPEN.
   */
  private async checkCaptcha(setting: CaptchaSetting, token: string | null, remoteIp: string | null): Promise<'passed' | 'required' | 'failed' | 'unavailable'> {
    const { captcha, clock } = this.deps;
    if (token === null) return 'required';
    if (!captcha) return 'unavailable';
    const judged = judgeCaptcha(await captcha.verifier.verify(setting.provider, setting.secret, token, remoteIp), setting.minScore);
    if (judged === 'failed' || (judged === 'unavailable' && !captcha.failOpen)) return judged;
    const now = clock.now();
    return (await captcha.tokens.claim(token, now, secondsBefore(now, captchaTokenSeconds))) ? 'passed' : 'failed';
  }

  /**
   * Holds a send's estimated price of its client's budget: what it holds (null: nothing, the client having no
   * budget or none being enforced, or the send not fitting) and the period it would pass (null: it fits).
   */
  private async holdBudget(clientId: string, verificationId: string, settings: ClientSettings, channel: Channel, to: Destination, now: Date): Promise<BudgetHold> {
    const { spend, sendPrice } = this.deps;
    if (!spend || !sendPrice || !hasBudget(settings.budget)) return { held: null, over: null };
    const amount = sendPrice(channel, to);
    const over = await spend.hold(clientId, verificationId, amount, settings.budget, now);
    return { held: over === null ? amount : null, over };
  }

  /**
   * Gives back a hold of a send not made. A failure here loses nothing: the sweep gives back, within minutes, the
   * hold of a verification that is not pending (or was never written).
   */
  private async releaseHold(verificationId: string, amount: Amount): Promise<void> {
    await this.deps.spend?.release(verificationId, amount).catch(() => undefined);
  }

  /**
   * NEW_COUNTRY_LIMIT_COUNT's quota and key for a send towards a country the client has no verified code in; null
   * when the country is known to the client, the cap is off, or the number is a test number.
   */
  private newCountryOf(v: Verification): { quota: WindowQuota; key: string } | null {
    const quota = this.deps.newCountrySends;
    const known = this.deps.conversion?.knowsCountry;
    if (!quota || !known || this.deps.policy.newCountrySends === 0 || v.testNumber || v.regionCode === null) return null;
    return known.call(this.deps.conversion, v.clientId, v.regionCode) ? null : { quota, key: newCountryKey(v.clientId, v.regionCode) };
  }

  /**
   * ABROAD_LIMIT_SHARE's quota, key and room for a create from an address in another country than its number's;
   * null when the address is local or cannot be placed, or the cap is off.
   */
  private abroadOf(v: Verification, address: string | null): { quota: WindowQuota; key: string; room: number } | null {
    const { abroadSends: quota, policy } = this.deps;
    if (!quota || !policy.abroad || policy.abroad.share === 0 || v.regionCode === null) return null;
    if (this.whereFrom(address, v.regionCode) !== 'elsewhere') return null;
    const verified = this.deps.conversion?.verifiedIn?.(v.regionCode) ?? 0;
    return { quota, key: abroadKey(v.regionCode), room: abroadRoom(verified, policy.abroad) };
  }

  /**
   * Whether an end user's address is in their number's country (`local`), known to be in another (`elsewhere`), or
   * neither can be told (no address, no country for it, or IP_COUNTRY_DATABASE off).
   */
  private whereFrom(address: string | null, regionCode: string | null): 'local' | 'elsewhere' | 'unknown' {
    const country = address === null || regionCode === null ? null : (this.deps.addressCountry?.(address) ?? null);
    return country === null ? 'unknown' : country === regionCode ? 'local' : 'elsewhere';
  }

  /** The throttle on the route a new verification's first send takes, if its country is throttled. */
  private throttleOn(v: Verification, channel: Channel, now: Date): Throttle | null {
    const { conversion } = this.deps;
    if (!conversion || v.regionCode === null) return null;
    return conversion.throttleOn({ regionCode: v.regionCode, countryCode: v.countryCode, network: v.network ?? '', provider: conversion.firstProvider(channel, v) }, now);
  }

  /**
   * An outcome as it is answered, its risk factors counted (metrics) when it has any; a create refused towards
   * `refusedNumber` is recorded for the verdicts (whether that number's user turns out real).
   */
  private judged<T extends CreateOutcome | ResendOutcome>(outcome: T, refusedNumber?: { readonly clientId: string; readonly phoneNumber: string }): T {
    // A send that went out names the factors of the rules in shadow that would have refused it.
    if (outcome.kind === 'created' && outcome.verification.risk) this.deps.observer?.riskFactors?.(outcome.verification.risk.factors);
    if (!('factors' in outcome) || outcome.factors.length === 0) return outcome;
    this.deps.observer?.riskFactors?.(outcome.factors);
    if (refusedNumber) this.deps.refusals?.refused(refusedNumber.clientId, refusedNumber.phoneNumber, outcome.factors, this.deps.clock.now());
    return outcome;
  }

  /** A client's verification as it reads now (a PENDING one past its time reads EXPIRED). */
  async fetch(clientId: string, id: string): Promise<Verification | null> {
    const v = await this.deps.store.find(clientId, id);
    return v ? asOf(v, this.deps.clock.now()) : null;
  }

  /**
   * Verify (contract 3.3), optimistically: read, decide, save only if nobody changed the verification meanwhile
   * (else the store runs this again on what they left). Each lost race means another call moved the counter
   * or ended the verification, which can happen at most OTP_MAX_ATTEMPTS times, hence the bound.
   */
  async verify(clientId: string, id: string, code: string): Promise<VerifyOutcome> {
    const { store, policy, clock } = this.deps;
    const committed = await store.optimistic(async (tx): Promise<VerifyOutcome> => {
      const current = await tx.find(clientId, id);
      // A relayed code is its auth server's to check: there is nothing to verify here.
      if (!current || current.relayed) return { kind: 'not-found' };
      const now = clock.now();
      const decision = decideVerify(current, code, now, policy.maxAttempts);
      if (decision.kind === 'not-pending') {
        // Record an expiry the sweep has not reached yet, so that its event is neither lost nor late.
        if (current.status === 'PENDING') tx.save(current, decision.current, this.eventsFor(decision.current, now));
        return { kind: 'not-pending', verification: decision.current };
      }
      tx.save(current, decision.next, this.eventsFor(decision.next, now));
      return { kind: decision.kind, verification: decision.next };
    }, policy.maxAttempts + 2);
    return dispatched(this.deps.afterCommit, committed);
  }

  /**
   * Resend (contract 9): the same code again through the channel that carries it (a call from the same caller
   * id), from the channel's first provider, at most OTP_MAX_SENDS sends and no sooner than the cool-down.
   */
  async resend(clientId: string, id: string, captchaToken: string | null = null): Promise<ResendOutcome> {
    const { store, policy } = this.deps;
    // `--captcha-when throttled`: a token that comes is checked first, as a create's is (nothing taken before it);
    // without one, the resend throttle asks for one instead of refusing.
    const settings = await this.deps.clientSettings(clientId);
    let challenge: 'ask' | 'passed' | null = null;
    if (settings.captcha?.when === 'throttled') {
      if (captchaToken !== null) {
        const captcha = await this.checkCaptcha(settings.captcha, captchaToken, null);
        if (captcha !== 'passed') {
          if (captcha !== 'unavailable') this.deps.observer?.resendRefused?.('captcha');
          return this.judged(captchaRefusal(captcha));
        }
        challenge = 'passed';
      } else challenge = 'ask';
    }
    // A resend towards a country new to the client counts as its create did (NEW_COUNTRY_LIMIT_COUNT), holds its
    // price of a budget, and is asked of the number's network and of the client's decision webhook: the
    // verification is read first for its number, country and channel, only when one of them is on.
    const budgeted = this.deps.spend && hasBudget(settings.budget);
    const { simSwap, callForwarding } = this.deps.carrierChecks ?? {};
    const carrierChecked = simSwap !== undefined || callForwarding !== undefined;
    const decision = this.deps.decisions ? settings.decision : null;
    const known =
      (this.deps.newCountrySends && policy.newCountrySends > 0) || budgeted || carrierChecked || decision !== null ? await store.find(clientId, id) : null;
    // The factors of the rules heard on this resend (contract 18); those of a resend that went are the metrics'.
    const heard: FactorEntry[] = [];
    const modes = this.deps.ruleModes?.() ?? allEnforced;
    const modeOf = (rule: RiskRule) => modes.modeOf(rule, clientId);
    if (carrierChecked && known) {
      const refused = await this.askCarrierOnResend(known, settings, { token: captchaToken, passed: challenge === 'passed' }, modeOf, heard);
      if (refused !== null) {
        if (refused.kind === 'not-allowed' || refused.outcome !== 'unavailable') this.deps.observer?.resendRefused?.(refused.kind === 'captcha' ? 'captcha' : 'call-forwarding');
        return this.judged(refused);
      }
    }
    // The client's own say, as on a create; a resend that could not go anyway (ended, a test number) asks nothing.
    if (decision !== null && known && known.status === 'PENDING' && known.expiresAt > this.deps.clock.now() && !known.testNumber && !known.relayed) {
      const denied = await this.decided(clientId, decision, modeOf, heard, {
        id: known.id,
        phoneNumber: known.phoneNumber,
        countryCode: known.countryCode,
        channel: known.delivery.channel,
        reference: known.reference,
        signals: { ip: null, deviceId: null, platform: null },
        risk: riskOfSent(heard, challenge === 'passed'),
      });
      if (denied !== null) {
        this.deps.observer?.resendRefused?.('decision');
        return this.judged(denied);
      }
    }
    // A resend is a send (CLIENT_DAILY_SEND_LIMIT): its share is taken first, and given back unless it resends.
    const dailySends = policy.clientDailySends > 0 ? (this.deps.dailySends ?? null) : null;
    const sendTaken = dailySends === null ? true : await dailySends.tryAcquire(clientId);
    const newCountry = known ? this.newCountryOf(known) : null;
    const newCountryTaken = newCountry === null ? null : await newCountry.quota.tryAcquire(newCountry.key);
    let budget: BudgetHold = { held: null, over: null };
    const giveBack = async () => {
      if (dailySends !== null && sendTaken) dailySends.release(clientId);
      if (newCountry !== null && newCountryTaken) newCountry.quota.release(newCountry.key);
      if (budget.held !== null) await this.releaseHold(id, budget.held);
    };
    try {
      if (budgeted && known && known.status === 'PENDING' && !known.testNumber) {
        budget = await this.holdBudget(clientId, id, settings, channelOfDelivery(known.delivery.channel), known, this.deps.clock.now());
      }
    } catch (err) {
      await giveBack();
      throw err;
    }
    // Read from the conversion watch (no statement): a client whose resends convert badly keeps unknown users' low.
    const throttled = this.deps.conversion?.resendThrottleOn?.(clientId, this.deps.clock.now()) ?? null;
    let committed;
    try {
      committed = await this.resendIn(clientId, id, sendTaken, newCountryTaken, budget.over, throttled !== null, challenge, modeOf, heard);
    } catch (err) {
      await giveBack();
      throw err;
    }
    if (committed.value.kind !== 'resent' || committed.value.verification.testNumber) await giveBack();
    const outcome = dispatched(this.deps.afterCommit, committed);
    if (outcome.kind === 'rate-limited') this.deps.observer?.resendRefused?.(outcome.reason);
    if (outcome.kind === 'captcha') this.deps.observer?.resendRefused?.('captcha');
    if (outcome.kind === 'resent' && outcome.verification.testNumber) await this.deps.testSends?.(outcome.verification);
    if (outcome.kind === 'resent' && heard.length > 0) this.deps.observer?.riskFactors?.(heard);
    return this.judged(outcome);
  }

  /**
   * A resend's one transaction script; `sendTaken` false: the day's quota has no send left for it; `throttled`:
   * the client's resends are throttled, so a code of a user with no verified history has only a few; `challenge`:
   * the client asks a CAPTCHA before a throttle refuses (`ask`), and this resend carried a good one (`passed`).
   */
  private resendIn(
    clientId: string,
    id: string,
    sendTaken: boolean,
    newCountryTaken: boolean | null,
    overBudget: BudgetRefusal | null,
    throttled: boolean,
    challenge: 'ask' | 'passed' | null,
    modeOf: (rule: RiskRule) => RuleMode,
    heard: FactorEntry[],
  ): Promise<Committed<ResendOutcome>> {
    const { store, policy, clock } = this.deps;
    // A rule off is not asked; one in shadow names its factor and lets the resend go.
    const refuses = (rule: RiskRule) => hear(rule, modeOf(rule), heard);
    // A refusal's factors, as heard so far (the script may run again: its own are begun afresh each time).
    const refused = (reason: ResendLimit, retryAfterSeconds: number, budget?: BudgetRefusal) =>
      ({ kind: 'rate-limited', reason, retryAfterSeconds, ...(budget && { budget }), factors: [...heard] }) as const;
    // The carrier checks' factors, heard before the transaction, stay; the script's own are begun afresh each run.
    const carried = heard.length;
    return store.transaction(async (tx): Promise<ResendOutcome> => {
      heard.length = carried;
      const current = await tx.findForUpdate(id, clientId);
      if (!current) return { kind: 'not-found' };
      const now = clock.now();
      const decision = decideResend(current, now, policy.resend);
      switch (decision.kind) {
        case 'not-pending':
          return this.notPending(tx, current, decision.current, now);
        case 'limited':
          // A code's own limits have no mode: they always enforce.
          return { kind: 'rate-limited', reason: decision.reason, retryAfterSeconds: decision.retryAfterSeconds, factors: [enforced(limitRule(decision.reason))] };
        case 'resend': {
          if (current.testNumber) {
            // A test number has no send job: its code reaches no provider, and counts toward no quota (contract 9).
            const next = {
              ...decision.next,
              delivery: testNumberDelivery(current.delivery.channel, current.delivery.sends + 1, now),
              deliveries: [...current.deliveries, testNumberAttempt(current.delivery.channel, now)],
            };
            tx.update(next);
            return { kind: 'resent', verification: next };
          }
          if (newCountryTaken === false && refuses('new-country')) return refused('new-country', untilNextHour(now));
          // An attack resends codes it never types; a real user resends a late code, and is mostly known already (the
          // number, address, network or device verified before). Asked only past the unknown user's resends, or,
          // for the free ones, when the code's address may be abroad: those are a local user's (an attack's proxies
          // are anywhere; a user whose code is late is mostly where their number is).
          // A client that asks a CAPTCHA gives an unknown user none free: a person passes it, a script does not.
          const free = challenge === null ? (policy.unknownUserResends ?? 0) : 0;
          const pastFree = current.sendRequests - 1 >= free;
          const held = throttled && challenge !== 'passed' && (pastFree || this.deps.addressCountry !== undefined);
          if (held && !(this.deps.lists?.().allows(current.phoneNumber, clientId) ?? false)) {
            const user = await tx.resendUser(clientId, id, secondsBefore(now, verifiedHistoryDays * 86_400));
            if (!user.known && (pastFree || this.whereFrom(user.address, current.regionCode) === 'elsewhere') && refuses('resend-throttle')) {
              if (challenge === 'ask') return { kind: 'captcha', outcome: 'required', factors: [...heard] };
              return refused('unknown-user', Math.max(1, Math.ceil((current.expiresAt.getTime() - now.getTime()) / 1000)));
            }
          }
          if (!sendTaken && refuses('daily-quota')) return refused('daily-quota', untilNextUtcDay(now));
          if (overBudget !== null && refuses('budget')) return refused('budget', untilPeriodEnds(overBudget.period, now), overBudget);
          const job = await tx.findSendJob(id);
          if (!job) throw new Error(`verification ${id} has no send job`);
          // The rules heard on this resend (in shadow, or a CAPTCHA passed) join the record's risk.
          const next = heard.length === 0 && challenge !== 'passed' ? decision.next : { ...decision.next, risk: withLaterSend(current.risk, heard, challenge === 'passed') };
          tx.update(next);
          if (next.risk !== current.risk && next.risk !== undefined) tx.updateRisk(id, next.risk);
          const provider = this.deps.firstProvider?.(job.channel, current) ?? null;
          tx.saveSendJob({ ...dueAgain(job, provider, now, this.deps.afterCommit.claimUntil('send', now)), lastError: null }, next, now);
          return { kind: 'resent', verification: next };
        }
      }
    }, [`verification|${id}`]);
  }

  /** Cancel (contract 9): FAILED, CANCELED, with its event; a send not yet made is not made. */
  async cancel(clientId: string, id: string): Promise<CancelOutcome> {
    const { store, clock } = this.deps;
    const committed = await store.transaction(async (tx): Promise<CancelOutcome> => {
      const current = await tx.findForUpdate(id, clientId);
      if (!current) return { kind: 'not-found' };
      const now = clock.now();
      const decision = decideCancel(current, now);
      if (decision.kind === 'not-pending') return this.notPending(tx, current, decision.current, now);
      this.change(tx, decision.next, now);
      return { kind: 'canceled', verification: decision.next };
    }, [`verification|${id}`]);
    return dispatched(this.deps.afterCommit, committed);
  }

  /** Approve (contract 15, Twilio's `Status=approved`): SUCCESS without a code, with its event. */
  async approve(clientId: string, id: string): Promise<ApproveOutcome> {
    const { store, clock } = this.deps;
    const committed = await store.transaction(async (tx): Promise<ApproveOutcome> => {
      const current = await tx.findForUpdate(id, clientId);
      if (!current) return { kind: 'not-found' };
      const now = clock.now();
      const decision = decideApprove(current, now);
      if (decision.kind === 'not-pending') return this.notPending(tx, current, decision.current, now);
      this.change(tx, decision.next, now);
      return { kind: 'approved', verification: decision.next };
    }, [`verification|${id}`]);
    return dispatched(this.deps.afterCommit, committed);
  }

  /** A client's newest verification of a number (a check by number, contract 15 and 20): never an older one. */
  async latestOfNumber(clientId: string, countryCode: string, phoneNumber: string): Promise<Verification | null> {
    const phone = parsePhone(countryCode, phoneNumber);
    if (!phone) return null;
    const v = await this.deps.store.latestOfNumber(clientId, phone.e164);
    return v ? asOf(v, this.deps.clock.now()) : null;
  }

  /** Not PENDING any more; an expiry the sweep has not recorded yet is recorded now, so its event is not late. */
  private notPending(tx: VerificationTx, stored: Verification, current: Verification, now: Date): { kind: 'not-pending'; verification: Verification } {
    if (stored.status === 'PENDING') this.change(tx, current, now);
    return { kind: 'not-pending', verification: current };
  }

  /** Expire (contract 3.4, the clock's move): records EXPIRED on due verifications; returns how many it moved. */
  async expireDue(limit = 500): Promise<number> {
    const now = this.deps.clock.now();
    if (!(await this.deps.store.anyDue('expiry', now))) return 0;
    const committed = await this.deps.store.transaction(async (tx) => {
      const due = await tx.lockDue(now, limit);
      for (const v of due) this.change(tx, asOf(v, now), now);
      return due.length;
    });
    return dispatched(this.deps.afterCommit, committed);
  }

  private change(tx: VerificationTx, next: Verification, now: Date): void {
    tx.update(next);
    tx.record(this.eventsFor(next, now));
  }

  private eventsFor(v: Verification, now: Date): OutboxEvent[] {
    return eventsFor(v, now, this.deps.random, this.deps.afterCommit);
  }

  /** The same key again: the first response for the same body, 409 for another. */
  private async replay(
    tx: VerificationTx,
    clientId: string,
    fingerprint: string,
    claim: { readonly fingerprint: string; readonly verificationId: string },
  ): Promise<CreateOutcome> {
    if (claim.fingerprint !== fingerprint) return { kind: 'idempotency-key-reused' };
    // Read inside the open transaction: the embedded database has one session, so a read beside it would wait forever.
    const first = await tx.findForUpdate(claim.verificationId, clientId);
    if (!first) throw new Error(`idempotency key points at missing verification ${claim.verificationId}`);
    // The first response showed the record as created; show it again exactly so.
    const asCreated: Verification = {
      ...first,
      status: 'PENDING',
      counter: 0,
      updatedAt: first.createdAt,
      failureReason: null,
      sendRequests: 1,
      lastSendAt: first.createdAt,
      delivery: { ...first.delivery, provider: null, messageId: null, status: 'QUEUED', sends: 0, updatedAt: first.createdAt },
      deliveries: [],
      nextStepAt: null,
      failoverAt: null,
      steps: 0,
    };
    return { kind: 'replayed', verification: asCreated };
  }
}

function secondsBefore(now: Date, seconds: number): Date {
  return new Date(now.getTime() - seconds * 1000);
}

function latest(a: Date, b: Date): Date {
  return a > b ? a : b;
}
