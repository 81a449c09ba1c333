import { dispatched, type AfterCommit } from './after-commit.js';
import { ringsTheNumber, type CarrierChecker, type CarrierOutcome } from './carrier-checks.js';
import { channelOfDelivery, deliveryChannelOf, type Channel } from './channel-driver.js';
import { utcDay } from './daily-quota.js';
import { nextStep, stepDue } from './fallback.js';
import { decideReceipt, decideSendFailure, nextInRoute } from './delivery.js';
import { eventsFor } from './outbox-events.js';
import type { Clock, Random } from './ports.js';
import { defaultDestination, type Destination } from './destinations.js';
import type { Route } from './routes.js';
import type { Amount, Money } from './money.js';
import { costOf } from './prices.js';
import type { AwaitingProof, DeliveryReceipt, StepAnswer } from './send-result.js';
import { dueAgain, turnAttempts, type SendJob } from './send-job.js';
import { effectiveStatus, fallbackLeft, sendError, withAttemptOf, withLatestAttempt, withRefund, withTurn, type RequestType, type Verification } from './verification.js';
import type { ParkedReceipt, SentWritten, VerificationStore, VerificationTx } from './verification-store.js';
import { allEnforced, withLaterSend, type FactorEntry, type RuleModes } from './risk.js';

/** Told of every receipt that moved a send, with the time since the provider took it (metrics). */
export interface ReceiptObserver {
  receipt(channel: Channel, provider: string, status: DeliveryReceipt['status'], secondsSinceSent: number | null): void;
  /** A workflow step taken (contract 13): the channel it sends through, and whether a failure or the clock moved it. */
  step?(channel: Channel, reason: 'failure' | 'time'): void;
  /** A code sent once more through `to` because `from` reported no delivery in its route's time (contract 17). */
  deliveryFailover?(channel: Channel, from: string, to: string): void;
  /** A send a provider took, with its cost in COST_CURRENCY (contract 17); told only when the cost is known. */
  sendCost?(channel: Channel, provider: string, regionCode: string | null, cost: Amount): void;
  /** The risk factors a workflow step was judged by (contract 18: a call step to a forwarded line). */
  riskFactors?(factors: readonly FactorEntry[]): void;
}

/** What a send costs (contract 17). */
export interface Pricing {
  /** The imported price of a send through `provider`; null when none matches. */
  priceOf(provider: string, channel: Channel, to: Destination): Money | null;
  /** The highest imported price of `channel` (0 when none): what a send of unknown cost counts as against a budget. */
  highestOf(channel: Channel): Amount;
  /** COST_CURRENCY. */
  readonly currency: string;
}

export interface DeliveryServiceDeps {
  readonly store: VerificationStore;
  readonly afterCommit: AfterCommit;
  /** A channel's providers for a number by name, in failover order: its route's, else the channel's list. */
  readonly providerOrder: (channel: Channel, to: Destination) => readonly string[];
  readonly pricing: Pricing;
  /**
   * The route a channel's sends to a number take (contract 17): its destination, which the cost ledger names, and
   * its `--failover-after`; null: none is set, and the channel's provider list applies.
   */
  readonly routeFor: (channel: Channel, to: Destination) => Pick<Route, 'destination' | 'failoverAfterSeconds'> | null;
  /**
   * CALL_FALLBACK_TO_SMS: when no call provider can place a dropped call, its code goes out by SMS from `sender`
   * (E.164); null: the verification fails.
   */
  readonly callFallback: { readonly sender: string } | null;
  /** Seconds before each retry of a transient failure (SEND_RETRY_DELAYS). */
  readonly retryDelays: readonly number[];
  readonly clock: Clock;
  readonly random: Random;
  readonly observer?: ReceiptObserver;
  /**
   * Where a workflow's step of a request type sends (contract 13): its driver's channel, and the number the code
   * goes out from for a verification (the step's sender; the code is the verification's own).
   */
  readonly steps: (type: RequestType) => { readonly channel: Channel; readonly sender: (v: Verification) => string };
  /** CLIENT_DAILY_SEND_LIMIT is on: a step counts as a send of its client that day. */
  readonly countSends: boolean;
  /**
   * CALL_FORWARDING_PROVIDER (contract 18): asked before a time-driven step that rings the number, whose send the
   * risk rules then judge on its answer (`judge`, as every send is judged); absent: off, and a step asks nothing.
   */
  readonly callForwarding?: {
    readonly check: CarrierChecker;
    readonly judge: (v: Verification, left: readonly RequestType[], forwarded: CarrierOutcome) => Promise<{ readonly steps: number | null; readonly heard: readonly FactorEntry[] }>;
  };
  /** Each rule's mode per client (contract 18); absent: every rule enforces. */
  readonly ruleModes?: () => RuleModes;
}

/** What the network said of the numbers of due steps that ring them, by verification id. */
type ForwardingOfDue = ReadonlyMap<string, CarrierOutcome>;

/** A receipt that moved a send: its status, and the seconds since the provider took the code (when it was SENT). */
interface ReceiptMove {
  readonly channel?: Channel;
  readonly status: DeliveryReceipt['status'];
  readonly seconds: number | null;
}

/**
 * What a receipt came to: recorded (or a repeat), or kept (parked) because no send has its message id yet: its
 * send's acceptance is not committed (a provider that reports at once or answered late), or it is not ours.
 */
export type ReceiptOutcome = 'recorded' | 'parked';

/**
 * The state changes of delivering a code (contract 3.4 and 8), each one transaction script: a provider's answer
 * to a send, and a provider's receipt. What they commit (a send through the next provider, a failed event) goes
 * to the after-commit dispatcher.
 */
export class DeliveryService {
  constructor(private readonly deps: DeliveryServiceDeps) {}

  /**
   * A provider answered a send (`result`), or the send was skipped (null: the verification was no longer
   * pending when its turn came; `provider` is then not used). Accepted: the code is SENT; refused or failed: retried, moved to the next
   * provider, or, with none left, the verification is FAILED, UNDELIVERABLE. `account`: the provider's account or
   * bind the message id is unique within (Provider.account). `to`: where the code went, for its route's
   * delivery-confirmed failover (null: not known to the caller; no failover is set).
   */
  async recordSendOutcome(job: SendJob, provider: string, result: StepAnswer | null, account = '', to: Destination | null = null): Promise<SentWritten> {
    const { store, clock } = this.deps;
    if (result?.kind === 'awaiting') return this.recordAwaiting(job, provider, result);
    if (result?.kind === 'accepted') {
      // The common case, on the path of every code: it moves only the delivery and the job, so it needs no read
      // and no lock, and goes with concurrent ones in one statement.
      const at = clock.now();
      const { pricing } = this.deps;
      const { cost, reported } = costOf(result.price ?? null, to && pricing.priceOf(provider, job.channel, to), pricing.currency);
      // Read once: the ledger names the route, and its --failover-after sets when the send moves on.
      const route = to && this.deps.routeFor(job.channel, to);
      const written = await store.recordSent({
        verificationId: job.verificationId,
        channel: job.channel,
        deliveryChannel: deliveryChannelOf(job.channel),
        provider,
        account,
        messageId: result.messageId,
        attempt: job.attempts,
        turnAttempts: turnAttempts(job, provider),
        status: result.delivered === true ? 'DELIVERED' : 'SENT',
        at,
        failoverAt: result.delivered === true || to === null ? null : this.failoverAt(route?.failoverAfterSeconds ?? null, job.channel, provider, to, at),
        cost,
        charge: cost ?? pricing.highestOf(job.channel),
        reported,
        route: route?.destination ?? defaultDestination,
      });
      if (cost !== null) this.deps.observer?.sendCost?.(job.channel, provider, to?.regionCode ?? null, cost);
      // Receipts that came before this acceptance was committed apply now, in the order they came.
      if (written.parked) await this.applyParked(await store.parkedReceipts(100, { provider, account, messageId: result.messageId }));
      return written;
    }
    const committed = await store.transaction(async (tx) => {
      const now = clock.now();
      const current = await tx.findForUpdate(job.verificationId);
      if (!current) {
        tx.saveSendJob({ ...job, status: 'failed', claimedUntil: null, lastError: 'the verification is gone' }, null, now);
        return;
      }
      // A send made before a workflow step moved the verification to another channel (a resend or failover in
      // flight then): its outcome is the step before's, and must not move the new step's delivery or job.
      if (deliveryChannelOf(job.channel) !== current.delivery.channel) return null;
      if (result === null) {
        tx.saveSendJob({ ...job, status: 'sent', claimedUntil: null, lastError: 'not sent: the verification was no longer pending' }, current, now);
        return null;
      }
      const done = { ...job, provider, claimedUntil: null } as const;
      // After a refusal the send reads FAILED; a transient failure leaves its status as it was until something
      // happens, and names the provider tried when none had taken the code yet.
      const refused = result.kind === 'permanent';
      const called = current.delivery.status === 'QUEUED' ? { ...current.delivery, provider } : current.delivery;
      const delivery = refused ? { ...current.delivery, provider, messageId: null, status: 'FAILED' as const, updatedAt: now } : called;
      // This provider's turn (contract 20): its calls so far, this one included, and the error it ended with.
      const turn = {
        channel: current.delivery.channel,
        provider,
        at: now,
        attempts: turnAttempts(job, provider),
        lastError: sendError(refused ? 'PROVIDER_REFUSED' : 'PROVIDER_UNAVAILABLE', result.reason, now),
      };
      // A turn retried stays QUEUED on the record, and reads FAILED once it ends without the code taken.
      const ended = { ...current, delivery, deliveries: withTurn(current.deliveries, { ...turn, status: 'FAILED' }) };
      if (effectiveStatus(current, now) !== 'PENDING') {
        tx.update(refused ? ended : { ...current, deliveries: ended.deliveries });
        tx.saveSendJob({ ...done, status: 'failed', lastError: result.reason }, current, now);
        return;
      }
      const decision = decideSendFailure(job, provider, result, this.deps.providerOrder(job.channel, current), this.deps.retryDelays, now);
      switch (decision.kind) {
        case 'retry': {
          tx.update({ ...current, delivery, deliveries: withTurn(current.deliveries, { ...turn, status: 'QUEUED' }) });
          tx.saveSendJob({ ...done, status: 'pending', providerFailures: turn.attempts, dueAt: decision.at, lastError: result.reason }, current, now);
          return;
        }
        case 'failover':
          tx.update(ended);
          this.sendThrough(tx, { ...done, lastError: result.reason }, decision.provider, ended, now);
          return;
        case 'give-up':
          return this.exhausted(tx, { ...done, lastError: result.reason }, ended, now);
      }
    });
    const stepped = dispatched(this.deps.afterCommit, committed);
    // Told once committed: a script may run more than once.
    if (stepped) this.deps.observer?.step?.(stepped, 'failure');
    return { tookIdFrom: null, parked: false };
  }

  /**
   * Applies kept receipts whose send is known by now (the acceptance's own application may have lost a race with
   * the receipt's parking, or its process died in between); true when `limit` were found (there may be more).
   */
  async applyParkedReceipts(limit: number): Promise<boolean> {
    const parked = await this.deps.store.parkedReceipts(limit);
    await this.applyParked(parked);
    return parked.length === limit;
  }

  /** How many of them applied (their send is known). */
  private async applyParked(parked: readonly ParkedReceipt[]): Promise<number> {
    let applied = 0;
    for (const p of parked) if ((await this.recordReceipt(p.provider, p.receipt, p.account, p.id)) === 'recorded') applied++;
    return applied;
  }

  /**
   * A provider's receipt for one of its messages (of `account`, the provider's account or bind). Idempotent: a
   * repeat changes nothing.
   */
  async recordReceipt(provider: string, receipt: DeliveryReceipt, account = '', parkedId: string | null = null): Promise<ReceiptOutcome> {
    const { store, clock } = this.deps;
    const parked = { outcome: 'parked', moved: null } as const;
    const committed = await store.transaction(async (tx): Promise<{ outcome: ReceiptOutcome; moved: ReceiptMove | null; stepped?: Channel | null }> => {
      const now = clock.now();
      const id = await tx.findProviderMessage(provider, account, receipt.messageId);
      if (!id) {
        // Kept until its send's acceptance is committed (a receipt kept already stays as it is).
        if (parkedId === null) tx.parkReceipt(provider, account, receipt, now);
        return parked;
      }
      if (parkedId !== null) tx.unpark(parkedId);
      const current = await tx.findForUpdate(id);
      if (!current) return { outcome: 'recorded', moved: null };
      const channel = channelOfDelivery(current.delivery.channel);
      const decision = decideReceipt(current, provider, receipt, this.deps.providerOrder(channel, current), now);
      // A refund (Telegram's, of a message not delivered in time) makes that send cost nothing, in the record and the ledger.
      const refund = (attempts: Verification['deliveries']) => (receipt.refunded === true ? withRefund(attempts, provider) : attempts);
      if (receipt.refunded === true) tx.refundSend(id, provider);
      if (decision.kind === 'ignore') {
        if (receipt.refunded === true) tx.update({ ...current, deliveries: refund(current.deliveries) });
        return { outcome: 'recorded', moved: null };
      }
      const error = receipt.status === 'UNDELIVERED' ? sendError('UNDELIVERED', receipt.detail ? `the provider's receipt: ${receipt.detail}` : "the provider's receipt gave no detail", now) : null;
      if (decision.kind === 'earlier') {
        // A send failed over by the clock reports after all: recorded on its own attempt; the latest send moves on as it is.
        tx.update({ ...current, deliveries: refund(withAttemptOf(current.deliveries, provider, current.delivery.channel, receipt.status, error)) });
        return { outcome: 'recorded', moved: { status: receipt.status, seconds: null, channel } };
      }
      const sentAt = current.delivery.status === 'SENT' ? current.delivery.updatedAt.getTime() : null;
      const moved = { status: receipt.status, seconds: sentAt === null ? null : Math.max(0, now.getTime() - sentAt) / 1000 };
      const lastError = `undelivered: ${receipt.detail ?? 'no detail'}`;
      // Its outcome known, the send no longer waits for its delivery-confirmed failover.
      const failoverAt = receipt.status === 'SENT' ? current.failoverAt : null;
      const next = { ...current, delivery: decision.delivery, deliveries: refund(withLatestAttempt(current.deliveries, provider, receipt.status, error)), failoverAt };
      let stepped: Channel | null = null;
      switch (decision.kind) {
        case 'update':
          tx.update(next);
          break;
        case 'failover': {
          const job = await tx.findSendJob(id);
          tx.update(next);
          if (job) this.sendThrough(tx, { ...job, lastError }, decision.provider, next, now);
          break;
        }
        case 'give-up': {
          // Only a call that may fall back to SMS, or a workflow with a step left, needs its job (a read of its
          // own); anything else just fails.
          const sendsOn = (channel === 'call' && this.deps.callFallback) || fallbackLeft(next).length > 0;
          const job = sendsOn ? await tx.findSendJob(id) : null;
          if (job) stepped = this.exhausted(tx, { ...job, lastError }, next, now);
          else this.fail(tx, next, now);
          break;
        }
      }
      return { outcome: 'recorded', moved: moved && { ...moved, channel }, stepped };
    });
    const { outcome, moved, stepped } = dispatched(this.deps.afterCommit, committed);
    // Told once committed: a script may run more than once.
    if (moved) this.deps.observer?.receipt(moved.channel ?? 'sms', provider, moved.status, moved.seconds);
    if (stepped) this.deps.observer?.step?.(stepped, 'failure');
    if (outcome === 'parked' && parkedId === null) {
      // The acceptance may have committed after this receipt's read and before its keeping, each unseen by the
      // other: one more look, now that the keeping is committed, applies it at once rather than a second later.
      const kept = await store.parkedReceipts(100, { provider, account, messageId: receipt.messageId });
      if ((await this.applyParked(kept)) > 0) return 'recorded';
    }
    return outcome;
  }

  /**
   * Time-driven steps (contract 13): verifications whose step clock ran out without a successful verify move to
   * their next step, its send job written due (claimed for this process when it sends) in the same transaction,
   * so a step is never lost across a crash; rows another instance holds are skipped, so none is sent twice.
   * Returns how many were looked at.
   */
  async takeDueSteps(limit = 500): Promise<number> {
    const { store, clock, callForwarding } = this.deps;
    // Asked before the transaction, as a create asks; with no check configured the poll is as it was.
    const forwarding = callForwarding === undefined ? null : await this.forwardingOfDue(callForwarding.check, limit);
    // Polled five times a second: most polls find nothing, and a plain read finds that for a third of a transaction.
    if (forwarding === null ? !(await store.anyDue('step', clock.now())) : forwarding.looked === 0) return 0;
    const committed = await store.transaction(async (tx) => {
      const now = clock.now();
      const due = await tx.lockDueSends('step', now, limit);
      const stepped: Channel[] = [];
      const heard: FactorEntry[] | null = forwarding && [];
      for (const { verification: v, job } of due) {
        const mine: FactorEntry[] = [];
        const skip = forwarding !== null && job && stepDue(v, now) ? await this.pastForward(v, forwarding.answers, mine) : 0;
        // Due since the network was asked: left due, asked on the next poll.
        if (skip === 'unasked') continue;
        // A step's factors join the record's risk, as a resend's do (contract 18), and the metrics'.
        if (mine.length > 0) {
          tx.updateRisk(v.id, withLaterSend(v.risk, mine, false));
          heard?.push(...mine);
        }
        // A silent step's time is up without the device's proof (contract 19): it fails as a step does.
        if (v.delivery.channel === 'SILENT') {
          const next = this.failSilentStep(tx, job, v, 'no proof of the number within SILENT_TIMEOUT_SECONDS', now);
          if (next) stepped.push(next);
          continue;
        }
        const channel = job && stepDue(v, now) && skip !== null ? this.step(tx, { ...job, lastError: null }, { ...v, steps: v.steps + skip }, now) : null;
        if (channel) stepped.push(channel);
        // Nothing to send it with (no job), nothing left, or only calls to a forwarded line: its clock stops, and
        // the verification waits for its code.
        else tx.update({ ...v, nextStepAt: null });
      }
      return { looked: due.length, stepped, heard };
    });
    const { looked, stepped, heard } = dispatched(this.deps.afterCommit, committed);
    for (const channel of stepped) this.deps.observer?.step?.(channel, 'time');
    if (heard !== null && heard.length > 0) this.deps.observer?.riskFactors?.(heard);
    return looked;
  }

  /**
   * Call forwarding asked of the numbers whose due step rings them (a rule off for the client is not asked), read
   * without a lock before the transaction; answers are kept per number, so a number asked lately is not asked again.
   */
  private async forwardingOfDue(check: CarrierChecker, limit: number): Promise<{ readonly looked: number; readonly answers: ForwardingOfDue }> {
    const now = this.deps.clock.now();
    const due = await this.deps.store.readDue('step', now, limit);
    const modes = this.deps.ruleModes?.() ?? allEnforced;
    const ringing = due.flatMap((v) => {
      const [type] = fallbackLeft(v);
      const mode = modes.modeOf('call-forwarding', v.clientId);
      return stepDue(v, now) && type !== undefined && ringsTheNumber(type) && mode !== 'off' ? [{ v, mode }] : [];
    });
    const outcomes = await Promise.all(ringing.map(({ v }) => check.outcome(v.phoneNumber)));
    return { looked: due.length, answers: new Map(ringing.map(({ v }, i) => [v.id, outcomes[i] ?? 'failed'])) };
  }

  /**
   * How many steps more a step due now moves past a forwarded line, as the rules judge it (contract 18): 0 to send
   * it as it is, the count to the first step after it that does not ring, null when none is left (nothing is sent),
   * `unasked` when the step rings and its number was not asked (it fell due after the read). Heard factors join `heard`.
   */
  private async pastForward(v: Verification, answers: ForwardingOfDue, heard: FactorEntry[]): Promise<number | null | 'unasked'> {
    const left = fallbackLeft(v);
    const [type] = left;
    if (type === undefined || !ringsTheNumber(type) || !this.deps.callForwarding) return 0;
    const answer = answers.get(v.id);
    if (answer === undefined) return this.deps.ruleModes?.().modeOf('call-forwarding', v.clientId) === 'off' ? 0 : 'unasked';
    const judged = await this.deps.callForwarding.judge(v, left, answer);
    heard.push(...judged.heard);
    return judged.steps;
  }

  /**
   * Delivery-confirmed failover (contract 17): sends whose route's time passed without a DELIVERED receipt, their
   * verification still PENDING, go once more through the route's next provider, the same code, the job written
   * due (claimed for this process when it sends) in the same transaction; rows another instance holds are
   * skipped. Returns how many were looked at.
   */
  async takeDueFailovers(limit = 500): Promise<number> {
    const { store, clock } = this.deps;
    if (!(await store.anyDue('failover', clock.now()))) return 0;
    const committed = await store.transaction(async (tx) => {
      const now = clock.now();
      const due = await tx.lockDueSends('failover', now, limit);
      const moved: { channel: Channel; from: string; to: string }[] = [];
      for (const { verification: v, job } of due) {
        const from = v.delivery.provider;
        const to = job && from !== null && v.delivery.status === 'SENT' ? nextInRoute(this.deps.providerOrder(job.channel, v), from) : null;
        const next = { ...v, failoverAt: null };
        tx.update(next);
        if (!job || from === null || to === null) continue;
        const waited = v.failoverAt ? Math.round((v.failoverAt.getTime() - v.delivery.updatedAt.getTime()) / 1000) : 0;
        this.sendThrough(tx, { ...job, lastError: `${from} reported no delivery in ${waited} s` }, to, next, now);
        moved.push({ channel: job.channel, from, to });
      }
      return { looked: due.length, moved };
    });
    const { looked, moved } = dispatched(this.deps.afterCommit, committed);
    for (const m of moved) this.deps.observer?.deliveryFailover?.(m.channel, m.from, m.to);
    return looked;
  }

  /** When a send through `provider` just accepted goes on to the route's next provider without a DELIVERED receipt; null: never. */
  private failoverAt(seconds: number | null, channel: Channel, provider: string, to: Destination, at: Date): Date | null {
    if (seconds === null || nextInRoute(this.deps.providerOrder(channel, to), provider) === null) return null;
    return new Date(at.getTime() + seconds * 1000);
  }

  /**
   * Moves `v` to its workflow's next step, if one is left: the same code through the step's channel, at once
   * (its first provider; the job's attempts start again). Returns the step's channel; null when no step is left.
   */
  private step(tx: VerificationTx, job: SendJob, v: Verification, now: Date): Channel | null {
    const [type] = fallbackLeft(v);
    if (type === undefined) return null;
    const target = this.deps.steps(type);
    const moved = nextStep(v, deliveryChannelOf(target.channel), now);
    if (!moved) return null;
    tx.update(moved.next);
    // A step is a send wherever sends count (CLIENT_DAILY_SEND_LIMIT), though not against OTP_MAX_SENDS.
    if (this.deps.countSends && !v.testNumber) tx.countSend(v.clientId, utcDay(now));
    const stepJob: SendJob = { ...job, channel: target.channel, sender: target.sender(v), attempts: 0 };
    this.sendThrough(tx, stepJob, this.deps.providerOrder(target.channel, v)[0] ?? null, moved.next, now);
    return target.channel;
  }

  /** Writes the job due at once through `provider`, claimed for this process when it sends them itself. */
  private sendThrough(tx: VerificationTx, job: SendJob, provider: string | null, v: Verification, now: Date): void {
    tx.saveSendJob(dueAgain(job, provider, now, this.deps.afterCommit.claimUntil('send', now)), v, now);
  }

  /**
   * No provider of the job's channel is left. A dropped call falls back to SMS when configured (the record keeps
   * its type; `delivery.channel` reads SMS); then the workflow's next step, if one is left; only when the last
   * step failed is the verification FAILED, UNDELIVERABLE. Returns the channel of a workflow step it took, if any.
   */
  private exhausted(tx: VerificationTx, job: SendJob, v: Verification, now: Date): Channel | null {
    const { callFallback } = this.deps;
    const firstSms = this.deps.providerOrder('sms', v)[0];
    if (job.channel === 'call' && callFallback && firstSms) {
      const moved: Verification = {
        ...v,
        delivery: { channel: 'SMS', provider: null, messageId: null, status: 'QUEUED', sends: v.delivery.sends, updatedAt: now },
      };
      tx.update(moved);
      this.sendThrough(tx, { ...job, channel: 'sms', sender: callFallback.sender }, firstSms, moved, now);
      return null;
    }
    // A workflow's next step, failure-driven: at once, the same code (contract 13).
    const stepped = this.step(tx, job, v, now);
    if (stepped) return stepped;
    this.fail(tx, v, now);
    tx.saveSendJob({ ...job, status: 'failed', claimedUntil: null }, v, now);
    return null;
  }

  /**
   * A silent step began (contract 19): nothing was sent, so the delivery names its provider and stays QUEUED with
   * no send counted; the step's clock runs to `until` (SILENT_TIMEOUT_SECONDS after the create), when it fails as
   * a step does (takeDueSteps). The job is done: nothing is to be sent again.
   */
  private async recordAwaiting(job: SendJob, provider: string, result: AwaitingProof): Promise<SentWritten> {
    const committed = await this.deps.store.transaction(async (tx) => {
      const now = this.deps.clock.now();
      const current = await tx.findForUpdate(job.verificationId);
      const done = { ...job, provider, status: 'sent', claimedUntil: null, lastError: null } as const;
      if (!current || current.delivery.channel !== 'SILENT' || effectiveStatus(current, now) !== 'PENDING') {
        tx.saveSendJob(done, current ?? null, now);
        return;
      }
      const next: Verification = { ...current, delivery: { ...current.delivery, provider, updatedAt: now }, nextStepAt: result.until };
      tx.update(next);
      tx.saveSendJob(done, next, now);
    });
    dispatched(this.deps.afterCommit, committed);
    return { tookIdFrom: null, parked: false };
  }

  /**
   * A silent step that failed (contract 19: no proof in time, the device not verified, the operator's error): the
   * workflow's next step sends the code at once, else the verification is FAILED, UNDELIVERABLE. Returns the
   * step's channel, if one was taken.
   */
  private failSilentStep(tx: VerificationTx, job: SendJob | null, v: Verification, reason: string, now: Date): Channel | null {
    const failed: Verification = { ...v, nextStepAt: null, delivery: { ...v.delivery, status: 'FAILED', updatedAt: now } };
    const stepped = job ? this.step(tx, { ...job, lastError: reason }, failed, now) : null;
    if (stepped) return stepped;
    this.fail(tx, failed, now);
    return null;
  }

  /** A silent step failed now for `reason` (CAMARA's answer): the next step, else FAILED UNDELIVERABLE. */
  async silentStepFailed(verificationId: string, reason: string): Promise<void> {
    const committed = await this.deps.store.transaction(async (tx) => {
      const now = this.deps.clock.now();
      const current = await tx.findForUpdate(verificationId);
      if (!current || current.delivery.channel !== 'SILENT' || effectiveStatus(current, now) !== 'PENDING') return null;
      return this.failSilentStep(tx, await tx.findSendJob(verificationId), current, reason, now);
    });
    const stepped = dispatched(this.deps.afterCommit, committed);
    if (stepped) this.deps.observer?.step?.(stepped, 'failure');
  }

  private fail(tx: VerificationTx, v: Verification, now: Date): void {
    // An earlier send of this step that the clock moved on from (delivery-confirmed failover) may still arrive:
    // the verification stays PENDING, to be verified with that code or to expire, rather than fail UNDELIVERABLE.
    if (earlierSendOut(v)) {
      tx.update(v);
      return;
    }
    const failed: Verification = { ...v, status: 'FAILED', failureReason: 'UNDELIVERABLE', updatedAt: now };
    tx.update(failed);
    tx.record(eventsFor(failed, now, this.deps.random, this.deps.afterCommit));
  }
}

/** Whether a send of the current step through another provider than the latest's was taken and not reported undelivered. */
function earlierSendOut(v: Verification): boolean {
  const { channel, provider } = v.delivery;
  return v.deliveries.some((a) => a.channel === channel && a.provider !== provider && (a.status === 'SENT' || a.status === 'DELIVERED'));
}
