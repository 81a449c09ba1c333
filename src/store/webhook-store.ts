import { sql, type Kysely, type Selectable } from 'kysely';
import {
  deliveryStatuses,
  type AttemptOutcomeKind,
  type AttemptRecord,
  type ClaimedEvent,
  type EventFilter,
  type ReplayOutcome,
  type WebhookAttempt,
  type WebhookEvent,
  type WebhookEventWithAttempts,
} from '../domain/webhook-delivery.js';
import type { Database, EventsTable, WebhookAttemptsTable } from './schema.js';
import { Batcher } from './batcher.js';
import { notifyWorkersSql } from './outbox-rows.js';
import { isUuid } from './uuid.js';

const interruptedError = 'interrupted: the delivering worker stopped before the attempt ended';

/** Webhook events, their delivery attempts and operator actions, in PostgreSQL or PGlite. */
export class SqlWebhookStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** PostgreSQL: NOTIFY `webhookChannel` when an event becomes due, so other processes wake. */
    private readonly notify: boolean,
  ) {}

  /** Concurrent deliveries' results, written together (see recordAll). */
  private readonly records = new Batcher<{ record: AttemptRecord; now: Date }, boolean>((items) => this.recordAll(items));

  async claimDue(now: Date, leaseMs: number, limit: number): Promise<ClaimedEvent[]> {
    if (limit <= 0) return [];
    const leaseEnd = new Date(now.getTime() + leaseMs);
    // One statement (one round trip, atomic): lock due rows others do not hold, record the attempts their
    // earlier workers lost, and lease them.
    const rows = await this.db
      .with('due', (db) =>
        db
          .selectFrom('events')
          .select(['id', 'attempts', 'lease_until', 'attempt_started_at', 'webhook_url'])
          .where('delivery_status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .orderBy('next_attempt_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .with('lost', (db) =>
        db
          .insertInto('webhook_attempts')
          .columns(['event_id', 'attempt', 'attempted_at', 'webhook_url', 'outcome', 'error', 'next_attempt_at'])
          .expression((eb) =>
            eb
              .selectFrom('due')
              .select((e) => [
                'due.id',
                'due.attempts',
                e.fn.coalesce('due.attempt_started_at', 'due.lease_until').as('attempted_at'),
                e.fn.coalesce('due.webhook_url', sql.lit('')).as('webhook_url'),
                sql.lit('interrupted').as('outcome'),
                sql.lit(interruptedError).as('error'),
                sql<Date>`${now}::timestamptz`.as('next_attempt_at'),
              ])
              .where('due.lease_until', 'is not', null),
          )
          .onConflict((oc) => oc.columns(['event_id', 'attempt']).doNothing())
          .returning('event_id'),
      )
      .updateTable('events')
      .from('due')
      .set({
        attempts: sql`events.attempts + 1`,
        lease_until: leaseEnd,
        // The lease doubles as the next due time: a crashed worker's event comes back when it runs out.
        next_attempt_at: leaseEnd,
        attempt_started_at: now,
        updated_at: now,
      })
      .whereRef('events.id', '=', 'due.id')
      .returning([
        'events.id',
        'events.client_id',
        'events.verification_id',
        'events.payload',
        'events.webhook_url',
        'events.attempts',
        'events.retry_base',
        'events.created_at',
      ])
      .execute();
    return rows.flatMap((r) =>
      r.webhook_url === null
        ? []
        : [
            {
              id: r.id,
              clientId: r.client_id,
              verificationId: r.verification_id,
              payload: r.payload,
              webhookUrl: r.webhook_url,
              attempt: r.attempts,
              scheduleAttempt: r.attempts - r.retry_base,
              createdAt: r.created_at,
            },
          ],
    );
  }

  recordAttempt(record: AttemptRecord, now: Date): Promise<boolean> {
    return this.records.add({ record, now });
  }

  /**
   * Records many attempts in one statement (one round trip, one commit), each moving its event on only if
   * the event is still that attempt's: the attempt count fences out a worker whose lease ran out. The attempt
   * row is written either way; a later worker may have recorded it as interrupted, and what really happened
   * replaces that. Returns, per record, whether its event moved.
   */
  private async recordAll(items: readonly { record: AttemptRecord; now: Date }[]): Promise<boolean[]> {
    const rows = items.map(({ record, now }) => {
      const { next } = record;
      const delivered = next.kind === 'delivered';
      const failure = record.error ?? (record.statusCode !== null ? `HTTP ${record.statusCode}` : null);
      return sql`(${record.eventId}::uuid, ${record.attempt}::int, ${record.attemptedAt}::timestamptz,
        ${record.webhookUrl}::text, ${delivered ? 'delivered' : 'failed'}::text, ${record.statusCode}::int,
        ${record.error}::text, ${record.durationMs}::int, ${next.kind === 'retry' ? 'pending' : next.kind}::text,
        ${next.kind === 'retry' ? next.at : null}::timestamptz, ${delivered ? null : failure}::text,
        ${delivered ? record.attemptedAt : null}::timestamptz, ${now}::timestamptz)`;
    });
    const result = await sql<{ event_id: string; moved: boolean }>`
      WITH r (event_id, attempt, attempted_at, webhook_url, outcome, status_code, error, duration_ms, new_status,
              retry_at, last_error, delivered_at, now) AS (VALUES ${sql.join(rows)}),
      moved AS (
        UPDATE events e SET delivery_status = r.new_status, next_attempt_at = r.retry_at, lease_until = NULL,
          attempt_started_at = NULL, updated_at = r.now, delivered_at = COALESCE(r.delivered_at, e.delivered_at),
          last_error = r.last_error
        FROM r
        WHERE e.id = r.event_id AND e.attempts = r.attempt AND e.delivery_status = 'pending'
        RETURNING e.id
      )
      INSERT INTO webhook_attempts (event_id, attempt, attempted_at, webhook_url, outcome, status_code, error,
        duration_ms, next_attempt_at)
      SELECT r.event_id, r.attempt, r.attempted_at, r.webhook_url, r.outcome, r.status_code, r.error, r.duration_ms,
        CASE WHEN r.event_id IN (SELECT id FROM moved) THEN r.retry_at END
      FROM r
      ON CONFLICT (event_id, attempt) DO UPDATE SET attempted_at = excluded.attempted_at,
        webhook_url = excluded.webhook_url, outcome = excluded.outcome, status_code = excluded.status_code,
        error = excluded.error, duration_ms = excluded.duration_ms, next_attempt_at = excluded.next_attempt_at
      RETURNING event_id, event_id IN (SELECT id FROM moved) AS moved`.execute(this.db);
    const moved = new Map(result.rows.map((r) => [r.event_id, r.moved]));
    return items.map(({ record }) => moved.get(record.eventId) ?? false);
  }

  /** Events, newest first. */
  async list(filter: EventFilter): Promise<WebhookEvent[]> {
    let query = this.db.selectFrom('events').selectAll().orderBy('created_at', 'desc').orderBy('id').limit(filter.limit);
    if (filter.status) query = query.where('delivery_status', '=', filter.status);
    if (filter.verificationId !== undefined) {
      if (!isUuid(filter.verificationId)) return [];
      query = query.where('verification_id', '=', filter.verificationId);
    }
    return (await query.execute()).map(toEvent);
  }

  /** One event with all its attempts. */
  async show(id: string): Promise<WebhookEventWithAttempts | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    const attempts = await this.attemptsOf(this.db, [id]);
    return { ...toEvent(row), attemptLog: attempts.get(id) ?? [] };
  }

  /** A verification's events, oldest first, each with its attempts. */
  async forVerification(verificationId: string): Promise<WebhookEventWithAttempts[]> {
    if (!isUuid(verificationId)) return [];
    const rows = await this.db
      .selectFrom('events')
      .selectAll()
      .where('verification_id', '=', verificationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const attempts = await this.attemptsOf(
      this.db,
      rows.map((r) => r.id),
    );
    return rows.map((r) => ({ ...toEvent(r), attemptLog: attempts.get(r.id) ?? [] }));
  }

  /**
   * Sends an event again now, with a fresh retry schedule: a failed or delivered one, or a pending one waiting
   * for its next retry. An attempt in flight is left to finish.
   */
  async replay(id: string, now: Date): Promise<ReplayOutcome> {
    if (!isUuid(id)) return { kind: 'not-found' };
    return this.db.transaction().execute(async (trx): Promise<ReplayOutcome> => {
      const row = await trx.selectFrom('events').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      if (!row) return { kind: 'not-found' };
      if (row.webhook_url === null) return { kind: 'no-destination' };
      if (row.delivery_status === 'pending' && row.lease_until !== null && row.lease_until > now) {
        return { kind: 'in-flight', leaseUntil: row.lease_until };
      }
      const updated = await trx
        .updateTable('events')
        .set({ delivery_status: 'pending', next_attempt_at: now, retry_base: row.attempts, delivered_at: null, updated_at: now })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (this.notify) await notifyWorkersSql().execute(trx);
      return { kind: 'replayed', event: toEvent(updated) };
    });
  }

  private async attemptsOf(db: Kysely<Database>, eventIds: readonly string[]): Promise<Map<string, WebhookAttempt[]>> {
    const byEvent = new Map<string, WebhookAttempt[]>();
    if (eventIds.length === 0) return byEvent;
    const rows = await db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('event_id', 'in', [...eventIds])
      .orderBy('event_id')
      .orderBy('attempt')
      .execute();
    for (const r of rows) {
      const list = byEvent.get(r.event_id) ?? [];
      list.push(toAttempt(r));
      byEvent.set(r.event_id, list);
    }
    return byEvent;
  }
}

function toEvent(r: Selectable<EventsTable>): WebhookEvent {
  return {
    id: r.id,
    clientId: r.client_id,
    verificationId: r.verification_id,
    kind: r.kind,
    payload: r.payload,
    webhookUrl: r.webhook_url,
    deliveryStatus: deliveryStatuses.find((s) => s === r.delivery_status) ?? 'none',
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    leaseUntil: r.lease_until,
    deliveredAt: r.delivered_at,
    lastError: r.last_error,
    createdAt: r.created_at,
  };
}

function toAttempt(r: Selectable<WebhookAttemptsTable>): WebhookAttempt {
  const outcome: AttemptOutcomeKind =
    r.outcome === 'delivered' ? 'delivered' : r.outcome === 'interrupted' ? 'interrupted' : 'failed';
  return {
    attempt: r.attempt,
    attemptedAt: r.attempted_at,
    webhookUrl: r.webhook_url,
    outcome,
    statusCode: r.status_code,
    error: r.error,
    durationMs: r.duration_ms,
    nextAttemptAt: r.next_attempt_at,
  };
}
