import type { DeliveryReceipt, SendResult } from './send-result.js';
import { turnAttempts, type SendJob } from './send-job.js';
import { effectiveStatus, type Delivery, type Verification } from './verification.js';

/**
 * The rules of sending a code through a channel's providers (contract 8), pure: the caller persists what they
 * decide. `order` is the channel's providers in failover order (SMS_PROVIDER / CALL_PROVIDER).
 */

/** A provider that failed transiently this many times in a row gives way to the next, when there is one. */
export const transientFailuresBeforeFailover = 2;

/** The provider after `current` in the failover order; null when none is left. */
export function providerAfter(order: readonly string[], current: string): string | null {
  const at = order.indexOf(current);
  // A provider no longer configured hands over to the first that is.
  if (at < 0) return order[0] ?? null;
  return order[at + 1] ?? null;
}

/**
 * The provider after `current` in a route's order, for a delivery-confirmed failover (contract 17); null when none
 * is left, or when `current` is no longer in the order (a route changed meanwhile): a code the clock moves on goes
 * once through each provider of its route, never round again.
 */
export function nextInRoute(order: readonly string[], current: string): string | null {
  return order.includes(current) ? providerAfter(order, current) : null;
}

export type FailureDecision =
  /** Again through the same provider, at `at`. */
  | { readonly kind: 'retry'; readonly at: Date }
  /** At once through the next provider. */
  | { readonly kind: 'failover'; readonly provider: string }
  /** No provider and no retry left: the verification is FAILED, UNDELIVERABLE. */
  | { readonly kind: 'give-up' };

/**
 * A refused or failed send. A permanent refusal moves to the next provider at once; a transient failure is
 * retried after the next delay of SEND_RETRY_DELAYS (or the provider's Retry-After, if longer), unless the
 * provider keeps failing and another is configured; when neither a provider nor a delay is left, it gives up.
 */
export function decideSendFailure(
  job: SendJob,
  provider: string,
  result: Exclude<SendResult, { kind: 'accepted' }>,
  order: readonly string[],
  retryDelays: readonly number[],
  now: Date,
): FailureDecision {
  const next = providerAfter(order, provider);
  if (result.kind === 'permanent') return next ? { kind: 'failover', provider: next } : { kind: 'give-up' };
  if (next && turnAttempts(job, provider) >= transientFailuresBeforeFailover) return { kind: 'failover', provider: next };
  const delay = retryDelays[job.attempts - 1];
  if (delay !== undefined) {
    const wait = Math.max(delay, result.retryAfterSeconds ?? 0);
    return { kind: 'retry', at: new Date(now.getTime() + wait * 1000) };
  }
  return next ? { kind: 'failover', provider: next } : { kind: 'give-up' };
}

export type ReceiptDecision =
  /** Not about the latest send, or nothing new: nothing changes (repeats land here). */
  | { readonly kind: 'ignore' }
  /**
   * About an earlier send of the current step through another provider, still SENT when the clock moved its code
   * on (delivery-confirmed failover): recorded on its own attempt; the latest send is as it was.
   */
  | { readonly kind: 'earlier' }
  /** The latest send's status moves on. */
  | { readonly kind: 'update'; readonly delivery: Delivery }
  /** Undelivered while PENDING: the code goes out at once through the next provider. */
  | { readonly kind: 'failover'; readonly provider: string; readonly delivery: Delivery }
  /** Undelivered while PENDING and no provider left: FAILED, UNDELIVERABLE. */
  | { readonly kind: 'give-up'; readonly delivery: Delivery };

const settled = new Set(['DELIVERED', 'UNDELIVERED', 'FAILED']);

/** What a provider's receipt for one of its messages does to a verification. */
export function decideReceipt(
  v: Verification,
  provider: string,
  receipt: DeliveryReceipt,
  order: readonly string[],
  now: Date,
): ReceiptDecision {
  const { delivery } = v;
  if (delivery.provider !== provider || delivery.messageId !== receipt.messageId) {
    const earlier = delivery.provider !== provider && receipt.status !== 'SENT' && v.deliveries.some((a) => a.provider === provider && a.channel === delivery.channel && a.status === 'SENT');
    return earlier ? { kind: 'earlier' } : { kind: 'ignore' };
  }
  // A send's status only moves forward: a late "still on its way" after the outcome changes nothing.
  if (settled.has(delivery.status) || (receipt.status === 'SENT' && delivery.status === 'SENT')) return { kind: 'ignore' };
  const moved: Delivery = { ...delivery, status: receipt.status, updatedAt: now };
  if (receipt.status !== 'UNDELIVERED' || effectiveStatus(v, now) !== 'PENDING') return { kind: 'update', delivery: moved };
  const next = providerAfter(order, provider);
  return next ? { kind: 'failover', provider: next, delivery: moved } : { kind: 'give-up', delivery: moved };
}
