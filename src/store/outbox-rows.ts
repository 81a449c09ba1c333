import { sql, type RawBuilder } from 'kysely';
import type { OutboxEvent } from '../domain/events.js';

/** PostgreSQL channel told of webhooks falling due, so that delivery workers in other processes start at once. */
export const webhookChannel = 'otp_webhooks';

/**
 * The outbox row of an event: the one way events reach the outbox. Events without a destination are kept as a
 * record only; a claimed one is written as its first attempt already under way, leased to the writing process.
 */
export function eventRow(e: OutboxEvent) {
  const claimed = e.webhookUrl !== null && e.claimedUntil !== null;
  return {
    id: e.id,
    client_id: e.clientId,
    verification_id: e.verificationId,
    kind: e.kind,
    payload: JSON.stringify(e.payload),
    webhook_url: e.webhookUrl,
    delivery_status: e.webhookUrl ? 'pending' : 'none',
    attempts: claimed ? 1 : 0,
    // A claimed event falls due again only when its lease runs out.
    next_attempt_at: e.webhookUrl ? (claimed ? e.claimedUntil : e.createdAt) : null,
    lease_until: claimed ? e.claimedUntil : null,
    attempt_started_at: claimed ? e.createdAt : null,
    created_at: e.createdAt,
    updated_at: e.createdAt,
  };
}

/** True when an event is due for any worker at once: other processes must then be told on commit. */
export function dueForWorkers(events: readonly OutboxEvent[]): boolean {
  return events.some((e) => e.webhookUrl !== null && e.claimedUntil === null);
}

/** The NOTIFY that wakes delivery workers everywhere; sent with the transaction's commit, dropped on rollback. */
export function notifyWorkersSql(): RawBuilder<unknown> {
  return sql`SELECT pg_notify(${webhookChannel}, '')`;
}
