import { dispatched, type AfterCommit } from './after-commit.js';
import { channelOfDelivery, type Channel } from './channel-driver.js';
import { decideReceipt, decideSendFailure } from './delivery.js';
import { eventsFor } from './outbox-events.js';
import type { Clock, Random } from './ports.js';
import type { DeliveryReceipt, SendResult } from './send-result.js';
import { dueAgain, type SendJob } from './send-job.js';
import { effectiveStatus, type Verification } from './verification.js';
import type { ParkedReceipt, SentWritten, VerificationStore, VerificationTx } from './verification-store.js';

/** Told of every receipt that moved a send, with the time since the provider took it (metrics). */
export interface ReceiptObserver {
  receipt(provider: string, status: DeliveryReceipt['status'], secondsSinceSent: number | null): void;
}

export interface DeliveryServiceDeps {
  readonly store: VerificationStore;
  readonly afterCommit: AfterCommit;
  /** A channel's providers by name, in failover order. */
  readonly providerOrder: (channel: Channel) => readonly string[];
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
}

/** A receipt that moved a send: its status, and the seconds since the provider took the code (when it was SENT). */
interface ReceiptMove {
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
   * bind the message id is unique within (Provider.account).
   */
  async recordSendOutcome(job: SendJob, provider: string, result: SendResult | null, account = ''): Promise<SentWritten> {
    const { store, clock } = this.deps;
    if (result?.kind === 'accepted') {
      // The common case, on the path of every code: it moves only the delivery and the job, so it needs no read
      // and no lock, and goes with concurrent ones in one statement.
      const written = await store.recordSent({
        verificationId: job.verificationId,
        provider,
        account,
        messageId: result.messageId,
        attempt: job.attempts,
        status: result.delivered === true ? 'DELIVERED' : 'SENT',
        at: clock.now(),
      });
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
      if (result === null) {
        tx.saveSendJob({ ...job, status: 'sent', claimedUntil: null, lastError: 'not sent: the verification was no longer pending' }, current, now);
        return;
      }
      const done = { ...job, provider, claimedUntil: null } as const;
      // After a refusal the send reads FAILED; a transient failure leaves it as it was until something happens.
      const refused = result.kind === 'permanent';
      const delivery = refused ? { ...current.delivery, provider, messageId: null, status: 'FAILED' as const, updatedAt: now } : current.delivery;
      if (effectiveStatus(current, now) !== 'PENDING') {
        tx.update({ ...current, delivery });
        tx.saveSendJob({ ...done, status: 'failed', lastError: result.reason }, current, now);
        return;
      }
      const decision = decideSendFailure(job, provider, result, this.deps.providerOrder(job.channel), this.deps.retryDelays, now);
      switch (decision.kind) {
        case 'retry': {
          const failures = (job.provider === provider ? job.providerFailures : 0) + 1;
          tx.update({ ...current, delivery });
          tx.saveSendJob({ ...done, status: 'pending', providerFailures: failures, dueAt: decision.at, lastError: result.reason }, current, now);
          return;
        }
        case 'failover':
          tx.update({ ...current, delivery });
          this.sendThrough(tx, { ...done, lastError: result.reason }, decision.provider, { ...current, delivery }, now);
          return;
        case 'give-up':
          this.exhausted(tx, { ...done, lastError: result.reason }, { ...current, delivery }, now);
          return;
      }
    });
    dispatched(this.deps.afterCommit, committed);
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

  private async applyParked(parked: readonly ParkedReceipt[]): Promise<void> {
    for (const p of parked) await this.recordReceipt(p.provider, p.receipt, p.account, p.id);
  }

  /**
   * A provider's receipt for one of its messages (of `account`, the provider's account or bind). Idempotent: a
   * repeat changes nothing.
   */
  async recordReceipt(provider: string, receipt: DeliveryReceipt, account = '', parkedId: string | null = null): Promise<ReceiptOutcome> {
    const { store, clock } = this.deps;
    const parked = { outcome: 'parked', moved: null } as const;
    const committed = await store.transaction(async (tx): Promise<{ outcome: ReceiptOutcome; moved: ReceiptMove | null }> => {
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
      const decision = decideReceipt(current, provider, receipt, this.deps.providerOrder(channel), now);
      if (decision.kind === 'ignore') return { outcome: 'recorded', moved: null };
      const sentAt = current.delivery.status === 'SENT' ? current.delivery.updatedAt.getTime() : null;
      const moved = { status: receipt.status, seconds: sentAt === null ? null : Math.max(0, now.getTime() - sentAt) / 1000 };
      const next = { ...current, delivery: decision.delivery };
      const lastError = `undelivered: ${receipt.detail ?? 'no detail'}`;
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
          // Only a call that may fall back to SMS needs its job (a read of its own); anything else just fails.
          const job = channel === 'call' && this.deps.callFallback ? await tx.findSendJob(id) : null;
          if (job) this.exhausted(tx, { ...job, lastError }, next, now);
          else this.fail(tx, next, now);
          break;
        }
      }
      return { outcome: 'recorded', moved };
    });
    const { outcome, moved } = dispatched(this.deps.afterCommit, committed);
    // Told once committed: a script may run more than once.
    if (moved) this.deps.observer?.receipt(provider, moved.status, moved.seconds);
    return outcome;
  }

  /** Writes the job due at once through `provider`, claimed for this process when it sends them itself. */
  private sendThrough(tx: VerificationTx, job: SendJob, provider: string, v: Verification, now: Date): void {
    tx.saveSendJob(dueAgain(job, provider, now, this.deps.afterCommit.claimUntil('send', now)), v, now);
  }

  /**
   * No provider of the job's channel is left. A dropped call falls back to SMS when configured (the record keeps
   * its type; `delivery.channel` reads SMS); anything else is FAILED, UNDELIVERABLE.
   */
  private exhausted(tx: VerificationTx, job: SendJob, v: Verification, now: Date): void {
    const { callFallback } = this.deps;
    const firstSms = this.deps.providerOrder('sms')[0];
    if (job.channel === 'call' && callFallback && firstSms) {
      const moved: Verification = {
        ...v,
        delivery: { channel: 'SMS', provider: null, messageId: null, status: 'QUEUED', sends: v.delivery.sends, updatedAt: now },
      };
      tx.update(moved);
      this.sendThrough(tx, { ...job, channel: 'sms', sender: callFallback.sender }, firstSms, moved, now);
      return;
    }
    this.fail(tx, v, now);
    tx.saveSendJob({ ...job, status: 'failed', claimedUntil: null }, v, now);
  }

  private fail(tx: VerificationTx, v: Verification, now: Date): void {
    const failed: Verification = { ...v, status: 'FAILED', failureReason: 'UNDELIVERABLE', updatedAt: now };
    tx.update(failed);
    tx.record(eventsFor(failed, now, this.deps.random, this.deps.afterCommit));
  }
}
