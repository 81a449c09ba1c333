import { dispatched, type AfterCommit } from './after-commit.js';
import type { DailySends } from './daily-quota.js';
import { hasBudget, type Spend } from './budgets.js';
import type { Amount } from './money.js';
import type { WindowQuota } from './new-country.js';
import type { AbroadPolicy } from './abroad.js';
import { deliveryChannelOf, type Channel, type ChannelDriver } from './channel-driver.js';
import type { ClientThrottle, ResendThrottle, Route, Throttle } from './conversion.js';
import type { DestinationPolicy } from './destination-rules.js';
import { allEnforced, allowedRisk, enforced, limitRule, riskOfSent, withLaterSend, type FactorEntry, type LimitReason, type RuleModes } from './risk.js';
import type { OutboxEvent } from './events.js';
import type { PhoneLimitPolicy } from './limits.js';
import { eventsFor } from './outbox-events.js';
import type { ClientSettings } from './client-settings.js';
import type { NumberLists } from './number-lists.js';
import type { CaptchaTokenStore, CaptchaVerifier } from './captcha.js';
import { nonGeographicRegion, parsePhone, shownTo } from './phone.js';
import type { PrefixPolicy } from './prefix-velocity.js';
import type { Destination, Route as ProviderRoute } from './routes.js';
import type { Clock, Random } from './ports.js';
import { defaultFallback, fallbackProblem } from './fallback.js';
import type { SignalPolicy, Signals } from './signals.js';
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
import type { Committed, CreateHistoryQuery, VerificationStore, VerificationTx } from './verification-store.js';
import type { RefusalRecorder } from './verdicts.js';
import { verifyServiceProviders, type ServiceCodeChecks } from './service-code.js';
import { verifyByService } from './verify-service-check.js';
import type { CustomerDecisions, DecisionAnswer } from './decision.js';
import type { CarrierChecks, CarrierOutcome } from './carrier-checks.js';
import { sendRules } from './rules/index.js';
import { SendJudge, type Prepared } from './rules/judge-send.js';
import { secondsBefore, verifiedHistoryDays } from './rules/rule-deps.js';
import { Judgement, type RuleRefusal, type Send } from './rules/send-rule.js';

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

/** What a create worked out before its transaction: what it sends, what it locks and reads, what its rules prepared. */
interface CreatePlan {
  readonly channel: Channel;
  /** The E.164 number the code goes out from. */
  readonly sender: string;
  readonly serializeOn: readonly string[];
  readonly locks: readonly string[];
  readonly query: CreateHistoryQuery;
  readonly prepared: Prepared;
}

/** A create's verified history is read back this far: a user who verified within it is a known user. */
export { verifiedHistoryDays } from './rules/rule-deps.js';

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

/** The limits a create or resend is refused by (429). */
export type CreateLimit = LimitReason;

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
  /** Refused by a rule (contract 18), with the factors heard. */
  | SendRefused
  | { readonly kind: 'idempotency-key-reused' };

/**
 * A send refused by a rule (contract 18): `not-allowed` the destination, a blocked prefix, the number's network or
 * the client's own say (`detail` says which and what); `blocked` a block list (`value`: the listed number or prefix
 * it falls under); `rate-limited` a limit (`budget`: the period the send would have passed; `throttled`: the country
 * and network a conversion throttle is on); `captcha` the client's CAPTCHA. `factors`: every rule heard objecting.
 */
export type SendRefused = RuleRefusal extends infer R ? (R extends RuleRefusal ? R & { readonly factors: readonly FactorEntry[] } : never) : never;

/**
 * The client has a CAPTCHA: `required` no token came, `failed` it was refused or used before, `unavailable` its
 * provider did not answer (no factor: nothing was judged). `factors`: the CAPTCHA's, or the throttle's that asked for it.
 */
export type CaptchaRefusal = Extract<SendRefused, { kind: 'captcha' }>;

/**
 * Which limit refused a create: `destination` a country or line type, `prefix` a blocked prefix, `ip` the end
 * user's address or its network, `device` their device, `blocked` a block list (contract 14).
 */
export type CreateRefusal = 'captcha' | 'destination' | 'prefix' | 'decision' | 'call-forwarding' | 'blocked' | Exclude<LimitReason, 'network'>;

export type VerifyOutcome =
  | { readonly kind: 'success'; readonly verification: Verification }
  | { readonly kind: 'mismatch'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | { readonly kind: 'not-found' }
  /** The verify service holding the code (contract 19) did not answer: nothing changed, no attempt counted. */
  | { readonly kind: 'unavailable'; readonly reason: string; readonly retryAfterSeconds: number };

/**
 * Why a resend was refused: the code's own limits (cool-down, OTP_MAX_SENDS), the day's quota, the new-country
 * cap, or `unknown-user`: the client's resends are throttled (MIN_RESEND_SAMPLE) and the code's user has no
 * verified history; `captcha`: the same for a client with `--captcha-when throttled`, asked for a CAPTCHA
 * instead, or one whose token failed.
 */
export type ResendRefusal = CreateRefusal;

export type ResendOutcome =
  | { readonly kind: 'resent'; readonly verification: Verification }
  | { readonly kind: 'not-pending'; readonly verification: Verification }
  | SendRefused
  | { readonly kind: 'not-found' };

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
  /**
   * Asks verify services (contract 19: twilio-verify, vonage-verify) whether a code is theirs, for verifications
   * whose code they sent; absent: none is configured, every code is ours.
   */
  readonly serviceChecks?: ServiceCodeChecks;
  /** The country (ISO 3166-1 alpha-2) an end user's address is in, null when unknown (IP_COUNTRY_DATABASE); absent: off. */
  readonly addressCountry?: (address: string) => string | null;
}

/**
 * Every state change of a verification, each one transaction script: decide with pure rules, write the change
 * with its events and send jobs through one transaction, then hand what committed to the after-commit
 * dispatcher. Reads are here too.
 */
export class VerificationService {
  private readonly judge: SendJudge;

  constructor(private readonly deps: VerificationServiceDeps) {
    this.judge = new SendJudge(sendRules, deps);
  }

  /** Create (contract 3.1): a new PENDING verification and its send job, if the rules allow it. */
  async create(request: CreateRequest): Promise<CreateOutcome> {
    const { policy, clock, random } = this.deps;
    const phone = parsePhone(request.countryCode, request.phoneNumber);
    if (!phone) return { kind: 'invalid-phone' };
    const driver = this.deps.channels(request.type);
    if (!policy.offered.has(driver.channel)) return { kind: 'channel-not-offered', channel: driver.channel };
    if (request.fallback !== null) {
      const issue = fallbackProblem(request.type, request.fallback, policy.fallbackTypes);
      if (issue) return { kind: 'invalid-fallback', issue };
    }
    const settings = await this.deps.clientSettings(request.clientId);
    const refusedNumber = { clientId: request.clientId, phoneNumber: phone.e164 };
    const testCode = settings.testNumbers[phone.e164] ?? null;
    const relayedCode = request.relayedCode ?? null;
    // A client's default is copied onto the verification: a later change of it does not move this one.
    const workflow = (request.fallback as readonly RequestType[] | null) ?? defaultFallback(request.type, settings.fallback, policy.fallbackTypes);
    let send: Send = {
      kind: 'create',
      clientId: request.clientId,
      settings,
      now: clock.now(),
      phone,
      signals: request.signals ?? null,
      captchaToken: request.captchaToken ?? null,
      relayed: Boolean(relayedCode),
      testNumber: testCode !== null,
      // An allowed number skips the per-number, prefix, signal, conversion and carrier rules; not the daily quota.
      allowed: this.deps.lists?.().allows(phone.e164, request.clientId) ?? false,
      type: request.type,
      workflow,
      current: null,
    };
    // The rules that ask outside the database, before anything is taken, counted or written.
    const j = this.judgement(request.clientId);
    const screened = await this.judge.screen(send, j);
    if (screened !== null) return this.refusedBefore(screened, j.heard, 'create', refusedNumber);
    // A call's code to a forwarded line goes out through the workflow's step instead, as a later step would go.
    const { steps } = j;
    const stepType = steps > 0 ? workflow[steps - 1] : undefined;
    const sendDriver = stepType === undefined ? driver : this.deps.channels(stepType);
    // A test number's code reaches no provider, whatever its route.
    const unserved = testCode === null ? (this.deps.unservedRoute?.(sendDriver.channel, { id: '', phoneNumber: phone.e164, regionCode: phone.region }) ?? null) : null;
    if (unserved !== null) return { kind: 'route-not-served', channel: sendDriver.channel, route: unserved };
    const now = clock.now();
    const { otp, from } = driver.newCode(random, testCode ?? relayedCode);
    // A test number's code reaches no network: conversion never reads it.
    const network = testCode === null ? ((await this.deps.networkOf?.(phone)) ?? null) : null;
    const channel = deliveryChannelOf(sendDriver.channel);
    const id = random.uuid();
    const verification: Verification = {
      id,
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
      // A first send through a verify service (contract 19) carries its code, never this one: none is shown.
      codeWithheld: !settings.revealCode || (testCode === null && relayedCode === null && !request.messageText && this.firstSendByService(sendDriver.channel, phone, id)),
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
    send = { ...send, now };
    const said = await this.judge.consult(send, j, verification);
    if (said !== null) return this.refusedBefore(said, j.heard, 'create', refusedNumber);
    // Shares of quotas and budgets are taken before the transaction (short statements, never a lock) and given
    // back if the create is refused after all.
    const prepared = await this.judge.prepare(send, j, verification);
    const query = this.judge.query(send, j, prepared);
    const locks = this.judge.locks(query);
    const { idempotency } = request;
    let committed;
    try {
      committed = await this.createIn(request, verification, send, j, {
        channel: sendDriver.channel,
        // A step's sender for the create's own code, as a later step's is made.
        sender: sendDriver === driver ? from.e164 : sendDriver.newCode(random, otp).from.e164,
        locks,
        serializeOn: [...locks, ...(idempotency ? [`key|${request.clientId}|${idempotency.key}`] : [])],
        query,
        prepared,
      });
    } catch (err) {
      await prepared.giveBack();
      throw err;
    }
    // A refused create counts toward no limit: the sends it took are given back.
    if (committed.value.kind !== 'created') await prepared.giveBack();
    const outcome = dispatched(this.deps.afterCommit, committed);
    this.observeRefusal(outcome, 'create');
    if (outcome.kind === 'created') {
      this.deps.observer?.verificationCreated(outcome.verification.type, outcome.verification.countryCode);
      if (outcome.verification.testNumber) await this.deps.testSends?.(outcome.verification);
    }
    return this.judged(outcome, refusedNumber);
  }

  /** Whether a create's first send goes through a verify service (its route's first provider, drawn by the id as the job's is). */
  private firstSendByService(channel: Channel, phone: { readonly e164: string; readonly region: string | null }, id: string): boolean {
    if (!this.deps.serviceChecks) return false;
    const first = this.deps.firstProvider?.(channel, { id, phoneNumber: phone.e164, regionCode: phone.region }) ?? null;
    return first !== null && verifyServiceProviders.has(first);
  }

  /** A create's one transaction script: lock, read, let the rules decide, write. */
  private createIn(request: CreateRequest, verification: Verification, send: Send, judgement: Judgement, plan: CreatePlan): Promise<Committed<CreateOutcome>> {
    const now = verification.createdAt;
    const { idempotency } = request;
    const signals = request.signals ?? null;
    return this.deps.store.transaction(async (tx): Promise<CreateOutcome> => {
      // The lock comes first in every create, so that a group of them takes its locks in one sorted statement.
      await tx.lock(plan.locks);
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
      const history = await tx.phoneHistory(plan.query);
      // What this run hears is begun afresh each time the script runs.
      const j = judgement.fork();
      // A number, address, network or device with a verified code is a known user's: a throttle falls on the
      // attack, not on them, and a new country is not new to them.
      const read = { kind: 'create', history, query: plan.query, known: history.verifiedBefore || j.challenge === 'passed' } as const;
      const refused = await this.judge.decide(send, j, read, plan.prepared);
      if (refused !== null) {
        // The refusal writes what it must (a prefix's block); the refused create itself leaves nothing else behind, its key included.
        refused.effect?.(tx);
        if (idempotency) await tx.releaseIdempotencyKey(request.clientId, idempotency.key);
        return withFactors(refused.refusal, j.heard);
      }
      const risk = riskOfSent(j.heard, j.captchaPassed);
      if (risk !== allowedRisk) verification = { ...verification, risk };
      tx.insert(verification, signals, j.localRoom);
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
    }, plan.serializeOn);
  }

  /**
   * A workflow step falling due (contract 13), judged by the rules as every send is (contract 18): `left` its type
   * and those after it; `forwarded` what the number's network said, asked before the step's transaction. Answers how
   * many steps more it moves past a forwarded line (0: none; null: none is left that does not ring, nothing is
   * sent), and the factors heard.
   */
  async judgeStep(v: Verification, left: readonly RequestType[], forwarded: CarrierOutcome | null): Promise<{ readonly steps: number | null; readonly heard: readonly FactorEntry[] }> {
    const [type = null] = left;
    const send: Send = {
      kind: 'step',
      clientId: v.clientId,
      settings: null,
      now: this.deps.clock.now(),
      phone: { e164: v.phoneNumber, countryCode: v.countryCode, region: v.regionCode },
      signals: null,
      captchaToken: null,
      relayed: v.relayed ?? false,
      testNumber: v.testNumber,
      allowed: false,
      type,
      workflow: left.slice(1),
      current: v,
    };
    const j = this.judgement(v.clientId);
    // The network was asked for all the steps due together: its answer is this send's, nothing is asked again.
    void j.memo('carrier', async () => [null, forwarded] as const);
    const refused = await this.judge.screen(send, j);
    return { steps: refused === null ? j.steps : null, heard: j.heard };
  }

  /** A send's judgement, its rules in their modes for the client (contract 18). */
  private judgement(clientId: string): Judgement {
    const modes = this.deps.ruleModes?.() ?? allEnforced;
    return new Judgement((rule) => modes.modeOf(rule, clientId));
  }

  /**
   * A create or resend refused before its transaction, as it is answered and counted; a create's `refusedNumber` is
   * recorded for the verdicts.
   */
  private refusedBefore(
    refusal: RuleRefusal,
    heard: readonly FactorEntry[],
    of: 'create' | 'resend',
    refusedNumber?: { readonly clientId: string; readonly phoneNumber: string },
  ): SendRefused {
    const outcome = withFactors(refusal, heard);
    this.observeRefusal(outcome, of);
    return this.judged(outcome, refusedNumber);
  }

  /** A refused create or resend counted by what refused it (a CAPTCHA provider that did not answer refused nothing). */
  private observeRefusal(outcome: CreateOutcome | ResendOutcome, of: 'create' | 'resend'): void {
    const reason = refusalReason(outcome);
    if (reason === null) return;
    if (of === 'create') this.deps.observer?.createRefused(reason);
    else this.deps.observer?.resendRefused?.(reason);
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
    // A code a verify service sent is that service's to check (contract 19), before any transaction.
    const byService = this.deps.serviceChecks ? await this.verifyByService(this.deps.serviceChecks, clientId, id, code) : null;
    if (byService !== null) return byService;
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

  /** Verify by a verify service's answer (src/domain/verify-service-check.ts); null: the code is ours to compare. */
  private verifyByService(checks: ServiceCodeChecks, clientId: string, id: string, code: string): Promise<VerifyOutcome | null> {
    const { store, afterCommit, clock, random, policy } = this.deps;
    return verifyByService({ store, afterCommit, clock, random, maxAttempts: policy.maxAttempts, checks }, clientId, id, code);
  }

  /**
   * Resend (contract 9): the same code again through the channel that carries it (a call from the same caller
   * id), from the channel's first provider, at most OTP_MAX_SENDS sends and no sooner than the cool-down, if the
   * rules allow it.
   */
  async resend(clientId: string, id: string, captchaToken: string | null = null): Promise<ResendOutcome> {
    const { store, policy, clock } = this.deps;
    const settings = await this.deps.clientSettings(clientId);
    // The rules that look at the number, its country or its channel before the transaction (the new-country cap,
    // a budget's hold, the network, the client's own say) have the verification read first, only when one is on.
    const current =
      (this.deps.newCountrySends && policy.newCountrySends > 0) ||
      (this.deps.spend && hasBudget(settings.budget)) ||
      this.deps.carrierChecks?.simSwap !== undefined ||
      this.deps.carrierChecks?.callForwarding !== undefined ||
      (this.deps.decisions && settings.decision !== null)
        ? await store.find(clientId, id)
        : null;
    const send: Send = {
      kind: 'resend',
      clientId,
      settings,
      now: clock.now(),
      phone: { e164: current?.phoneNumber ?? '', countryCode: current?.countryCode ?? '', region: current?.regionCode ?? null },
      signals: null,
      captchaToken,
      relayed: current?.relayed ?? false,
      testNumber: current?.testNumber ?? false,
      allowed: current !== null && (this.deps.lists?.().allows(current.phoneNumber, clientId) ?? false),
      type: null,
      workflow: [],
      current,
    };
    const j = this.judgement(clientId);
    const refusal = (await this.judge.screen(send, j)) ?? (current !== null ? await this.judge.consult(send, j, current) : null);
    if (refusal !== null) return this.refusedBefore(refusal, j.heard, 'resend');
    // A resend is a send: its shares are taken first, and given back unless it resends.
    const prepared = await this.judge.prepare(send, j, current);
    let committed;
    try {
      committed = await this.resendIn(send, id, j, prepared);
    } catch (err) {
      await prepared.giveBack();
      throw err;
    }
    if (committed.value.kind !== 'resent' || committed.value.verification.testNumber) await prepared.giveBack();
    const outcome = dispatched(this.deps.afterCommit, committed);
    this.observeRefusal(outcome, 'resend');
    if (outcome.kind === 'resent' && outcome.verification.testNumber) await this.deps.testSends?.(outcome.verification);
    if (outcome.kind === 'resent' && outcome.verification.risk && outcome.verification.risk !== current?.risk) this.deps.observer?.riskFactors?.(outcome.verification.risk.factors);
    return this.judged(outcome);
  }

  /** A resend's one transaction script: lock the verification, decide its own limits, let the rules decide, write. */
  private resendIn(send: Send, id: string, judgement: Judgement, prepared: Prepared): Promise<Committed<ResendOutcome>> {
    const { store, policy, clock } = this.deps;
    const { clientId } = send;
    return store.transaction(async (tx): Promise<ResendOutcome> => {
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
          // What this run hears is begun afresh each time the script runs; the screens' factors stay.
          const j = judgement.fork();
          let user: Promise<{ readonly known: boolean; readonly address: string | null }> | null = null;
          const read = {
            kind: 'resend',
            current,
            decision,
            user: () => (user ??= tx.resendUser(clientId, id, secondsBefore(now, verifiedHistoryDays * 86_400))),
          } as const;
          const refused = await this.judge.decide({ ...send, now }, j, read, prepared);
          if (refused !== null) return withFactors(refused.refusal, j.heard);
          const job = await tx.findSendJob(id);
          if (!job) throw new Error(`verification ${id} has no send job`);
          // The rules heard on this resend (in shadow, or a CAPTCHA passed) join the record's risk.
          const next = j.heard.length === 0 && !j.captchaPassed ? decision.next : { ...decision.next, risk: withLaterSend(current.risk, j.heard, j.captchaPassed) };
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

/** A rule's refusal as a create or resend answers it, with the factors heard. */
function withFactors(refusal: RuleRefusal, factors: readonly FactorEntry[]): SendRefused {
  return { ...refusal, factors: [...factors] } as SendRefused;
}

/** What a refused create or resend is counted as (`/metrics`); null: not refused, or refused by nothing judged. */
function refusalReason(outcome: CreateOutcome | ResendOutcome): CreateRefusal | null {
  switch (outcome.kind) {
    case 'captcha':
      return outcome.outcome === 'unavailable' ? null : 'captcha';
    case 'not-allowed':
      return outcome.rule;
    case 'blocked':
      return 'blocked';
    case 'rate-limited':
      return outcome.reason === 'network' ? 'ip' : outcome.reason;
    default:
      return null;
  }
}
