import type { OutboxEvent } from './events.js';
import type { SendJob } from './send-job.js';
import type { Verification } from './verification.js';

/** A send job a transaction committed, with the verification it sends, so that starting it costs no read. */
export interface CommittedSend {
  readonly job: SendJob;
  readonly verification: Verification;
}

/** What a transaction script committed beside its state change. */
export interface CommitEffects {
  readonly events: readonly OutboxEvent[];
  readonly sends: readonly CommittedSend[];
}

export const noEffects: CommitEffects = { events: [], sends: [] };

/**
 * Takes what a transaction committed and starts it (port; the dispatcher lives in src/jobs/). Work this process
 * will start at once is written claimed by it (`claimUntil`), so that no other worker takes it and starting it
 * needs no queue read; should the process die first, the claim runs out and any worker does it.
 */
export interface AfterCommit {
  /** Until when work of this kind, written now, is held for this process; null: written due for any worker. */
  claimUntil(kind: 'send' | 'event', now: Date): Date | null;
  /** Called once per commit, after it: starts the claimed work here, wakes the workers for the rest. */
  dispatch(effects: CommitEffects): void;
}

/** Hands what a transaction committed to the dispatcher (when it committed anything to start); returns the script's value. */
export function dispatched<T>(afterCommit: AfterCommit, committed: CommitEffects & { readonly value: T }): T {
  if (committed.events.length > 0 || committed.sends.length > 0) afterCommit.dispatch(committed);
  return committed.value;
}
