/**
 * Prefix velocity (contract 10): SMS pumping walks the numbers of a few ranges, so creates towards one range,
 * across all clients, are capped; a range past the cap is blocked for a while, whoever asks.
 */

/** PREFIX_LIMIT_COUNT per PREFIX_LIMIT_WINDOW_SECONDS, then PREFIX_BLOCK_SECONDS; count 0 turns it off. */
export interface PrefixPolicy {
  readonly count: number;
  readonly windowSeconds: number;
  readonly blockSeconds: number;
}

/** The range a number belongs to: its E.164 form less the last 3 digits (+23480312345 for +2348031234567). */
export function prefixOf(e164: string): string {
  return e164.slice(0, -3);
}

/** What the database says of a prefix: creates towards it within the window, and a block still in force. */
export interface PrefixState {
  readonly recentCreates: number;
  readonly blockedUntil: Date | null;
}

export type PrefixDecision =
  | { readonly kind: 'allowed' }
  /** Refused; `newBlock` when this create is the one that crossed the limit (the block is to be written). */
  | { readonly kind: 'blocked'; readonly until: Date; readonly newBlock: boolean };

export function decidePrefix(state: PrefixState, now: Date, policy: PrefixPolicy): PrefixDecision {
  if (state.blockedUntil !== null && state.blockedUntil > now) return { kind: 'blocked', until: state.blockedUntil, newBlock: false };
  if (policy.count === 0 || state.recentCreates < policy.count) return { kind: 'allowed' };
  return { kind: 'blocked', until: new Date(now.getTime() + policy.blockSeconds * 1000), newBlock: true };
}
