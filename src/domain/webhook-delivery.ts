/** Webhook events as delivery records: what the outbox holds, the worker claims and operators read (contract 4). */

/** Where an event stands: `none` means it has no destination and is kept as a record only. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'none';
export const deliveryStatuses: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'none'];

/** How an attempt ended; `interrupted` when its worker stopped (crash, lost lease) before it could tell. */
export type AttemptOutcomeKind = 'delivered' | 'failed' | 'interrupted';

/** An event claimed for one delivery attempt. */
export interface ClaimedEvent {
  readonly id: string;
  readonly clientId: string;
  readonly verificationId: string;
  /** The stored payload, untyped (jsonb). */
  readonly payload: unknown;
  readonly webhookUrl: string;
  /** This attempt's number, from 1 over the event's life; it fences the result (see recordAttempt). */
  readonly attempt: number;
  /** This attempt's place in the retry schedule, from 1 (counted again from 1 after a replay). */
  readonly scheduleAttempt: number;
  /** When the event was committed: a delivery's lag is measured from it. */
  readonly createdAt: Date;
}

/** The result of one attempt, and what happens next. */
export interface AttemptRecord {
  readonly eventId: string;
  readonly attempt: number;
  readonly attemptedAt: Date;
  readonly webhookUrl: string;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly next: { readonly kind: 'delivered' } | { readonly kind: 'retry'; readonly at: Date } | { readonly kind: 'failed' };
}

/** An event with its delivery state, as operators and clients read it. */
export interface WebhookEvent {
  readonly id: string;
  readonly clientId: string;
  readonly verificationId: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly webhookUrl: string | null;
  readonly deliveryStatus: DeliveryStatus;
  readonly attempts: number;
  /** The next attempt, or while one is in flight the end of its lease; null when none is due. */
  readonly nextAttemptAt: Date | null;
  /** Set while an attempt is in flight (or its worker died and the lease has not run out yet). */
  readonly leaseUntil: Date | null;
  readonly deliveredAt: Date | null;
  readonly lastError: string | null;
  readonly createdAt: Date;
}

export interface WebhookAttempt {
  readonly attempt: number;
  readonly attemptedAt: Date;
  readonly webhookUrl: string;
  readonly outcome: AttemptOutcomeKind;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number | null;
  readonly nextAttemptAt: Date | null;
}

export interface WebhookEventWithAttempts extends WebhookEvent {
  readonly attemptLog: readonly WebhookAttempt[];
}

export interface EventFilter {
  readonly status?: DeliveryStatus;
  readonly verificationId?: string;
  readonly limit: number;
}

export type ReplayOutcome =
  | { readonly kind: 'replayed'; readonly event: WebhookEvent }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'no-destination' }
  | { readonly kind: 'in-flight'; readonly leaseUntil: Date };
