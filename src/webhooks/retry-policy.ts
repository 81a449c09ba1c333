/**
 * When to try a webhook again: a pure function of the attempt number, the last response and a random number,
 * so the whole schedule can be tested without a clock or a network (contract 4).
 */

/** What the last attempt got. */
export type AttemptResult =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter: string | null }
  | { readonly kind: 'error' };

export type RetryDecision =
  | { readonly kind: 'delivered' }
  | {
      readonly kind: 'retry';
      readonly delayMs: number;
      /** `retry-after` when the receiver's Retry-After set the delay. */
      readonly basis: 'schedule' | 'retry-after';
    }
  | { readonly kind: 'give-up' };

/** Jitter spreads retries of many events failing together: each delay is scaled by 1 ± this. */
export const jitterFraction = 0.2;

export interface RetryInput {
  /** The attempt that just ended, counting from 1 (after a replay, from the replay). */
  readonly attempt: number;
  readonly result: AttemptResult;
  /** Seconds before each retry (WEBHOOK_RETRY_DELAYS): attempt n failing waits delays[n - 1]. */
  readonly delays: readonly number[];
  /** A uniform random number in [0, 1). */
  readonly random: number;
  /** Now, to read a Retry-After given as an HTTP date. */
  readonly now: Date;
}

export function decideRetry(input: RetryInput): RetryDecision {
  const { attempt, result, delays, random, now } = input;
  if (result.kind === 'response' && result.status >= 200 && result.status < 300) return { kind: 'delivered' };
  const scheduledSeconds = delays[attempt - 1];
  if (scheduledSeconds === undefined) return { kind: 'give-up' };
  const scheduledMs = scheduledSeconds * 1000;
  const jittered = Math.round(scheduledMs * (1 - jitterFraction + 2 * jitterFraction * random));
  if (result.kind === 'response' && (result.status === 429 || result.status === 503) && result.retryAfter !== null) {
    const askedMs = retryAfterMs(result.retryAfter, now);
    // Retry-After is the least the receiver wants us to wait; it is honoured up to twice the scheduled delay.
    if (askedMs !== null && askedMs > jittered) {
      return { kind: 'retry', delayMs: Math.min(askedMs, 2 * scheduledMs), basis: 'retry-after' };
    }
  }
  return { kind: 'retry', delayMs: jittered, basis: 'schedule' };
}

/** A Retry-After header (delay-seconds or HTTP-date, RFC 9110 10.2.3) in milliseconds from now; null if unreadable. */
export function retryAfterMs(value: string, now: Date): number | null {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
