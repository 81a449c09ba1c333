import type { Clock } from './ports.js';
import type { RequestType } from './verification.js';

/**
 * Carrier checks before a send (contract 18): the number's own network is asked whether its SIM changed lately or
 * its calls are forwarded. Each answer is kept per number for a while (a network charges per question, and one
 * user's retries ask the same), each question is bounded in time, and a question that fails or runs out of time
 * lets the send through: a carrier check adds evidence, it never takes the service down with its peer.
 */

/** The checks, as the metrics name them. */
export type CarrierCheckName = 'sim_swap' | 'call_forwarding';

/** What a check found: `flagged` (swapped lately, forwarded), `clear`, or why it found nothing (`failed`, `timeout`). */
export type CarrierOutcome = 'flagged' | 'clear' | 'failed' | 'timeout';

/** One check as a peer answers it (port of the create): true when the number is flagged; throws when it cannot tell. */
export interface CarrierCheck {
  flagged(e164: string, signal: AbortSignal): Promise<boolean>;
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects): the bound on a question. */
export type Wait = (ms: number, signal: AbortSignal) => Promise<void>;

/** Told of every question asked of a peer (metrics); a cached answer asks none. */
export interface CarrierCheckObserver {
  carrierChecked(check: CarrierCheckName, outcome: CarrierOutcome): void;
}

export interface CarrierCheckPolicy {
  /** CARRIER_CHECK_CACHE_SECONDS: how long a number's answer is kept. */
  readonly cacheSeconds: number;
  /** CARRIER_CHECK_TIMEOUT_MS: the longest a send waits for an answer. */
  readonly timeoutMs: number;
  /** The most numbers kept per check: past it the oldest answer goes first, so an attack on many numbers costs memory once. */
  readonly maxEntries: number;
}

/** The numbers a check keeps by default: a few megabytes at most. */
export const defaultCarrierCacheEntries = 50_000;

interface Kept {
  readonly flagged: boolean;
  /** Epoch milliseconds. */
  readonly until: number;
}

/**
 * One carrier check with its per-number answers kept. A hit reads one map entry and the clock. Failures and
 * time-outs are not kept: the next send asks again. Concurrent sends to one number share one question.
 */
export class CarrierChecker {
  private readonly kept = new Map<string, Kept>();
  private readonly asking = new Map<string, Promise<CarrierOutcome>>();

  constructor(
    readonly name: CarrierCheckName,
    private readonly check: CarrierCheck,
    private readonly deps: { readonly clock: Clock; readonly policy: CarrierCheckPolicy; readonly wait: Wait; readonly observer?: CarrierCheckObserver },
  ) {}

  /** The number's answer: kept, else asked within the time bound. */
  outcome(e164: string): Promise<CarrierOutcome> {
    const kept = this.kept.get(e164);
    if (kept !== undefined && kept.until > this.deps.clock.now().getTime()) return Promise.resolve(kept.flagged ? 'flagged' : 'clear');
    let asked = this.asking.get(e164);
    if (asked === undefined) {
      asked = this.ask(e164).finally(() => this.asking.delete(e164));
      this.asking.set(e164, asked);
    }
    return asked;
  }

  private async ask(e164: string): Promise<CarrierOutcome> {
    const { clock, policy, wait, observer } = this.deps;
    const stop = new AbortController();
    const answered = this.check.flagged(e164, stop.signal).then(
      (flagged): CarrierOutcome => (flagged ? 'flagged' : 'clear'),
      (): CarrierOutcome => 'failed',
    );
    const timedOut = wait(policy.timeoutMs, stop.signal).then((): CarrierOutcome => 'timeout');
    let outcome: CarrierOutcome;
    try {
      outcome = await Promise.race([answered, timedOut]);
    } finally {
      // Ends the peer's request (or the timer) that lost the race.
      stop.abort();
    }
    if (outcome === 'flagged' || outcome === 'clear') this.keep(e164, { flagged: outcome === 'flagged', until: clock.now().getTime() + policy.cacheSeconds * 1000 });
    observer?.carrierChecked(this.name, outcome);
    return outcome;
  }

  private keep(e164: string, kept: Kept): void {
    // A Map iterates in insertion order: re-inserting moves a number to the back, so the first key is the oldest.
    this.kept.delete(e164);
    if (this.kept.size >= this.deps.policy.maxEntries) {
      const oldest = this.kept.keys().next();
      if (oldest.done !== true) this.kept.delete(oldest.value);
    }
    this.kept.set(e164, kept);
  }
}

/** The checks configured here (SIM_SWAP_PROVIDER, CALL_FORWARDING_PROVIDER); absent: that check is off. */
export interface CarrierChecks {
  readonly simSwap?: CarrierChecker;
  readonly callForwarding?: CarrierChecker;
}

/** The request types whose code rings the number: a forwarded line would ring elsewhere. */
export function ringsTheNumber(type: RequestType): boolean {
  return type === 'VOICE_CALL' || type === 'DROPPED_CALL';
}

/**
 * Where a code goes when the number's calls are forwarded and the create's type rings it: the number of workflow
 * steps to skip to the first that does not ring (a forward takes every call), or null when none is left.
 */
export function stepPastForward(workflow: readonly RequestType[]): number | null {
  const index = workflow.findIndex((t) => !ringsTheNumber(t));
  return index === -1 ? null : index + 1;
}
