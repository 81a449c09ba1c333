import type { WebhookAttempt, WebhookEvent, WebhookEventWithAttempts } from '../domain/webhook-delivery.js';

/** One attempt as operators and clients read it (JSON). */
export interface AttemptView {
  readonly attempt: number;
  readonly attemptedAt: string;
  readonly outcome: WebhookAttempt['outcome'];
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number | null;
  readonly nextAttemptAt: string | null;
}

/** An event's delivery as operators and clients read it (JSON); `id` is the `webhook-id` header. */
export interface EventView {
  readonly id: string;
  readonly event: string;
  readonly verificationId: string;
  readonly clientId: string;
  readonly webhookUrl: string | null;
  readonly deliveryStatus: WebhookEvent['deliveryStatus'];
  readonly attemptCount: number;
  readonly inFlight: boolean;
  readonly nextAttemptAt: string | null;
  readonly deliveredAt: string | null;
  readonly lastError: string | null;
  readonly createdAt: string;
}

export interface EventDetailView extends EventView {
  readonly payload: unknown;
  readonly attempts: readonly AttemptView[];
}

export function eventView(e: WebhookEvent, now: Date): EventView {
  const inFlight = e.deliveryStatus === 'pending' && e.leaseUntil !== null && e.leaseUntil > now;
  return {
    id: e.id,
    event: e.kind,
    verificationId: e.verificationId,
    clientId: e.clientId,
    webhookUrl: e.webhookUrl,
    deliveryStatus: e.deliveryStatus,
    attemptCount: e.attempts,
    inFlight,
    nextAttemptAt: iso(e.nextAttemptAt),
    deliveredAt: iso(e.deliveredAt),
    lastError: e.lastError,
    createdAt: e.createdAt.toISOString(),
  };
}

export function eventDetailView(e: WebhookEventWithAttempts, now: Date): EventDetailView {
  return { ...eventView(e, now), payload: e.payload, attempts: e.attemptLog.map(attemptView) };
}

export function attemptView(a: WebhookAttempt): AttemptView {
  return {
    attempt: a.attempt,
    attemptedAt: a.attemptedAt.toISOString(),
    outcome: a.outcome,
    statusCode: a.statusCode,
    error: a.error,
    durationMs: a.durationMs,
    nextAttemptAt: iso(a.nextAttemptAt),
  };
}

function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}

/**
 * An attempt's error as a client may read it (GET /v1/otp/{id}/webhooks): never how the service's resolver
 * answered, which would make the delivery log a DNS oracle into the service's network (contract 4). Operators
 * (CLI, logs) keep the detail.
 */
export function clientVisibleError(error: string | null): string | null {
  if (error === null) return null;
  if (error.startsWith('destination refused:')) return 'destination refused: not a public address';
  if (/ENOTFOUND|EAI_AGAIN|EAI_FAIL|ENODATA|ESERVFAIL|getaddrinfo|no address found|no checked address/i.test(error)) {
    return 'could not resolve the destination';
  }
  return error;
}

/** An event's delivery as its client reads it: the operator's view, errors made safe to show. */
export function clientEventView(e: WebhookEventWithAttempts, now: Date): EventDetailView {
  const view = eventDetailView(e, now);
  return {
    ...view,
    lastError: clientVisibleError(view.lastError),
    attempts: view.attempts.map((a) => ({ ...a, error: clientVisibleError(a.error) })),
  };
}
