import type { AfterCommit, CommitEffects, CommittedSend } from '../domain/after-commit.js';
import type { OutboxEvent } from '../domain/events.js';

/** The workers of this process that take what it commits. */
export interface WorkConsumers {
  readonly sends: { sendNow(sends: readonly CommittedSend[]): void; wake(): void };
  /** Null when this process does not deliver webhooks (WEBHOOK_WORKER=false): its events are left to workers. */
  readonly events: { deliverNow(events: readonly OutboxEvent[]): void; wake(): void } | null;
}

export interface Leases {
  /** How long a send job written for this process is held for it. */
  readonly sendMs: number;
  /** How long an event written for this process is held for it (WEBHOOK_LEASE_MS). */
  readonly eventMs: number;
}

/**
 * The one after-commit dispatcher. While this process's workers run (connect .. disconnect), work it commits is
 * written claimed for them and started here at once, with no queue read; work left due (no workers here, or
 * released) wakes them, and other processes hear of due events by NOTIFY from the writing transaction.
 */
export class CommitDispatcher implements AfterCommit {
  private consumers: WorkConsumers | null = null;

  constructor(private readonly leases: Leases) {}

  /** From now on this process's workers take what it commits. */
  connect(consumers: WorkConsumers): void {
    this.consumers = consumers;
  }

  /** The workers are stopping: work committed from now on is written due, for any worker. */
  disconnect(): void {
    this.consumers = null;
  }

  claimUntil(kind: 'send' | 'event', now: Date): Date | null {
    const consumer = kind === 'send' ? this.consumers?.sends : this.consumers?.events;
    if (!consumer) return null;
    return new Date(now.getTime() + (kind === 'send' ? this.leases.sendMs : this.leases.eventMs));
  }

  dispatch(effects: CommitEffects): void {
    const { consumers } = this;
    if (!consumers) return;
    const claimed = effects.sends.filter((s) => s.job.claimedUntil !== null);
    if (claimed.length > 0) consumers.sends.sendNow(claimed);
    if (claimed.length < effects.sends.length) consumers.sends.wake();
    const deliverable = effects.events.filter((e) => e.webhookUrl !== null);
    const claimedEvents = deliverable.filter((e) => e.claimedUntil !== null);
    if (claimedEvents.length > 0) consumers.events?.deliverNow(claimedEvents);
    if (claimedEvents.length < deliverable.length) consumers.events?.wake();
  }

  /** Events made due outside a transaction script (an operator's replay): wake this process's delivery worker. */
  eventsDue(): void {
    this.consumers?.events?.wake();
  }
}
