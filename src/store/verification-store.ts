import { sql, type Kysely } from 'kysely';
import type { CommittedSend } from '../domain/after-commit.js';
import type { OutboxEvent } from '../domain/events.js';
import type { Verification } from '../domain/verification.js';
import type { DeliveryReceipt } from '../domain/send-result.js';
import type { Committed, DueSend, OptimisticTx, ParkedReceipt, SentRecord, SentWritten, VerificationStore, VerificationTx } from '../domain/verification-store.js';
import { Batcher } from './batcher.js';
import { GroupCommit } from './group-commit.js';
import { dueForWorkers, eventRow, webhookChannel } from './outbox-rows.js';
import type { Database } from './schema.js';
import { isUuid } from './uuid.js';
import { dueColumn, dueSends, toVerification } from './verification-rows.js';
import { GroupTransaction, SqlVerificationTx } from './verification-tx.js';

/** Saved jobs the dispatcher starts or wakes a worker for: pending, and claimed for this process or due now. */
function startable(saved: SqlVerificationTx['savedJobs']): CommittedSend[] {
  return saved.flatMap(({ job, verification }) =>
    verification && job.status === 'pending' ? [{ job, verification }] : [],
  );
}

/** A script handed to the locking runner, typed away so that scripts of any result share one queue. */
type Script = (tx: VerificationTx) => Promise<unknown>;

/** A save of one optimistic script (OptimisticTx.save). */
interface Save {
  readonly previous: Verification;
  readonly next: Verification;
  readonly events: readonly OutboxEvent[];
}

/**
 * Verifications with their send jobs, outbox events and idempotency keys, in PostgreSQL or PGlite: the
 * transaction runners the domain's scripts use, with the batching under them.
 */
export class SqlVerificationStore implements VerificationStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** PostgreSQL: NOTIFY workers in other processes, in the writing transaction, when events fall due. */
    private readonly notifyOtherProcesses: boolean,
    /** Whether an acceptance must move budgets' holds and spend (SpendStore.kept); false: no client has a budget. */
    private readonly spendKept: () => boolean = () => false,
  ) {}

  private readonly groups = new GroupCommit<Script, Committed<unknown>>((scripts) => this.commitGroup(scripts));
  /** Concurrent saves go together in one statement (see saveGroup). */
  private readonly saves = new Batcher<Save, boolean>((group) => this.saveGroup(group));
  /**
   * Whether receipts may be kept (parked) for sends not recorded yet: set when this process commits one, and by
   * each look for kept receipts (the workers' once-a-second task, on every instance). Acceptances look for kept
   * receipts only while it is set; one kept by another instance just before its acceptance was recorded here is
   * applied by that task within a second.
   */
  private receiptsMayBeKept = false;
  /**
   * How many groups that kept receipts this process has committed. A receipt kept while an acceptance's statement
   * ran is not in that statement's snapshot, and the receipt's own look missed the acceptance: a change here
   * while the statement ran makes it look once more, so in one process neither waits for the workers' task.
   */
  private keptCommits = 0;
  /** Concurrent point reads go together in one query. */
  private readonly reads = new Batcher<{ clientId: string; id: string }, Verification | null>((group) => this.readGroup(group));

  async anyDue(kind: 'expiry' | DueSend, now: Date): Promise<boolean> {
    // Each through its partial index (verifications_pending_expiry, verifications_next_step, verifications_failover).
    const pending = this.db.selectFrom('verifications').select('id').where('status', '=', 'PENDING');
    const due = kind === 'expiry' ? pending.where('expires_at', '<=', now) : dueSends(pending, kind, now);
    const row = await due.limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async readDue(kind: DueSend, now: Date, limit: number): Promise<Verification[]> {
    const rows = await dueSends(this.db.selectFrom('verifications').selectAll().where('status', '=', 'PENDING'), kind, now)
      .orderBy(dueColumn[kind])
      .limit(limit)
      .execute();
    return rows.map(toVerification);
  }

  transaction<T>(script: (tx: VerificationTx) => Promise<T>, serializeOn: readonly string[] = []): Promise<Committed<T>> {
    return this.groups.run(script, serializeOn) as Promise<Committed<T>>;
  }

  /** One database transaction for a group of scripts; if any throws, none commits (GroupCommit reruns them alone). */
  private async commitGroup(scripts: readonly Script[]): Promise<Committed<unknown>[]> {
    let kept = false;
    const committed = await this.db.transaction().execute(async (trx) => {
      const group = new GroupTransaction(trx, this.notifyOtherProcesses, scripts.length);
      const members = scripts.map(() => new SqlVerificationTx(group));
      const settled = await Promise.allSettled(
        scripts.map(async (script, i) => {
          try {
            return await script(members[i] as SqlVerificationTx);
          } finally {
            group.done();
          }
        }),
      );
      const values = settled.map((s) => {
        if (s.status === 'rejected') throw s.reason;
        return s.value;
      });
      await group.write(members);
      kept = members.some((m) => m.parked.length > 0);
      return members.map((m, i) => ({ value: values[i], events: m.events, sends: [...m.sends, ...startable(m.savedJobs)] }));
    });
    if (kept) {
      this.keptCommits++;
      this.receiptsMayBeKept = true;
    }
    return committed;
  }

  async optimistic<T>(script: (tx: OptimisticTx) => Promise<T>, rounds: number): Promise<Committed<T>> {
    for (let round = 0; round < rounds; round++) {
      const pending: { save: Save | null } = { save: null };
      const value = await script({
        find: (clientId, id) => this.find(clientId, id),
        save: (previous, next, events) => {
          if (pending.save) throw new Error('an optimistic script saves at most once');
          pending.save = { previous, next, events };
        },
      });
      const made = pending.save;
      if (!made) return { value, events: [], sends: [] };
      if (await this.saves.add(made)) return { value, events: made.events, sends: [] };
    }
    throw new Error(`the verification kept changing under an optimistic script (${rounds} rounds)`);
  }

  /**
   * One statement, so one round trip and one commit for the whole group: moves each verification to its
   * `next` only if it is still as its `previous` was read (same status and counter), and records the events
   * of those that moved in the same statement, so a change and its events commit together or not at all.
   * A verification saved twice in one group is saved once: the later save reports false and its script runs
   * again, as it would after losing any race.
   */
  private async saveGroup(group: readonly Save[]): Promise<boolean[]> {
    const first = new Map<string, Save>();
    for (const save of group) if (!first.has(save.previous.id)) first.set(save.previous.id, save);
    const saves = [...first.values()];
    const changes = saves.map(
      ({ previous: p, next: n }) =>
        sql`(${p.id}::uuid, ${p.status}::text, ${p.counter}::int, ${n.status}::text, ${n.counter}::int, ${n.updatedAt}::timestamptz, ${n.failureReason}::text)`,
    );
    const events = saves.flatMap((s) => s.events);
    const rows = events.map(eventRow);
    const recorded = rows.length
      ? sql`, recorded AS (
          INSERT INTO events (id, client_id, verification_id, kind, payload, webhook_url, delivery_status, attempts,
            next_attempt_at, lease_until, attempt_started_at, created_at, updated_at)
          SELECT e.* FROM (VALUES ${sql.join(
            rows.map(
              (r) => sql`(${r.id}::uuid, ${r.client_id}::uuid, ${r.verification_id}::uuid, ${r.kind}::text,
                ${r.payload}::jsonb, ${r.webhook_url}::text, ${r.delivery_status}::text, ${r.attempts}::int,
                ${r.next_attempt_at}::timestamptz, ${r.lease_until}::timestamptz, ${r.attempt_started_at}::timestamptz,
                ${r.created_at}::timestamptz, ${r.updated_at}::timestamptz)`,
            ),
          )}) AS e (id, client_id, verification_id, kind, payload, webhook_url, delivery_status, attempts,
            next_attempt_at, lease_until, attempt_started_at, created_at, updated_at)
          WHERE e.verification_id IN (SELECT id FROM moved)
        )`
      : sql``;
    // The NOTIFY rides in the same statement, so it goes out with the commit and only if something moved.
    const notify =
      this.notifyOtherProcesses && dueForWorkers(events)
        ? sql`, (SELECT pg_notify(${webhookChannel}, '') WHERE EXISTS (SELECT 1 FROM moved)) AS notified`
        : sql``;
    const result = await sql<{ moved: string[] | null }>`
      WITH r (id, prev_status, prev_counter, status, counter, updated_at, failure_reason) AS (VALUES ${sql.join(changes)}),
      moved AS (
        UPDATE verifications v SET status = r.status, counter = r.counter, updated_at = r.updated_at,
          failure_reason = r.failure_reason
        FROM r
        WHERE v.id = r.id AND v.status = r.prev_status AND v.counter = r.prev_counter
        RETURNING v.id
      )${recorded}
      SELECT (SELECT array_agg(id) FROM moved) AS moved${notify}`.execute(this.db);
    const moved = new Set(result.rows[0]?.moved ?? []);
    return group.map((save) => first.get(save.previous.id) === save && moved.has(save.previous.id));
  }

  /** Acceptances arriving together are written together (see writeSent). */
  private readonly sent = new Batcher<SentRecord, SentWritten>((group) => this.writeSent(group));

  recordSent(sent: SentRecord): Promise<SentWritten> {
    return this.sent.add(sent);
  }

  /**
   * One statement, one round trip and one commit for a group of acceptances: the delivery, the job, the message
   * id (taken over from an older send that had it: the newest send with an id gets its receipts). The upsert
   * itself says which send an id was taken from (`taken_from`, written from the row it replaces); kept receipts
   * are looked for only while any may exist (see receiptsMayBeKept): each table a statement names costs its
   * planning on every acceptance, and acceptances share the database with creates.
   */
  private async writeSent(group: readonly SentRecord[]): Promise<SentWritten[]> {
    const rows = group.map(
      (s) =>
        sql`(${s.verificationId}::uuid, ${s.provider}::text, ${s.account}::text, ${s.messageId}::text, ${s.attempt}::int, ${s.status}::text, ${s.at}::timestamptz,
          ${s.channel}::text, ${s.deliveryChannel}::text, ${s.turnAttempts}::int, ${s.failoverAt}::timestamptz,
          ${s.cost}::text, ${s.reported?.amount ?? null}::numeric, ${s.reported?.currency ?? null}::text, ${s.route}::text, ${s.charge}::numeric)`,
    );
    const keptBefore = this.keptCommits;
    const parked = this.receiptsMayBeKept
      ? sql`EXISTS (SELECT 1 FROM parked_receipts r WHERE r.provider = k.provider AND r.account = k.account AND r.message_id = k.message_id)`
      : sql`false`;
    const budgets = this.spendKept() ? acceptedSpend : sql``;
    const result = await sql<{ verification_id: string; provider: string; account: string; message_id: string; previous: string | null; parked: boolean }>`
      WITH s (verification_id, provider, account, message_id, attempt, status, at, channel, delivery_channel, turn_attempts, failover_at,
        cost, reported_amount, reported_currency, route, charge) AS (VALUES ${sql.join(rows)}),
      -- Verifications are locked first, in id order, as every transaction script locks them (a resend locks the
      -- verification, then its job). Left to itself PostgreSQL runs the job update before the verification's,
      -- and a resend of the same verification at that moment deadlocked with it.
      locked AS (SELECT v.id FROM verifications v WHERE v.id IN (SELECT verification_id FROM s) ORDER BY v.id FOR UPDATE),
      delivered AS (
        UPDATE verifications v SET delivery_provider = s.provider, delivery_message_id = s.message_id,
          delivery_status = s.status, delivery_sends = v.delivery_sends + 1, delivery_updated_at = s.at,
          -- A turn retried (a transient failure, then this call) is the latest attempt already, QUEUED: this
          -- acceptance ends it in its place, keeping its calls' last error (as withTurn does).
          deliveries = CASE WHEN s.turn_attempts > 1 AND v.deliveries->-1->>'status' = 'QUEUED' AND v.deliveries->-1->>'provider' = s.provider
              AND v.deliveries->-1->>'channel' = s.delivery_channel THEN v.deliveries - -1 ELSE v.deliveries END
            || jsonb_build_array(jsonb_build_object('channel', s.delivery_channel, 'provider', s.provider,
            'status', s.status, 'at', to_char(s.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'attempts', s.turn_attempts, 'cost', s.cost,
            'lastError', CASE WHEN s.turn_attempts > 1 AND v.deliveries->-1->>'provider' = s.provider THEN coalesce(v.deliveries->-1->'lastError', 'null'::jsonb) ELSE 'null'::jsonb END)),
          -- The current step's clock starts when its code is first sent; a resend or failover leaves it running.
          next_step_at = CASE WHEN v.next_step_at IS NULL AND v.steps < cardinality(v.workflow)
            THEN s.at + make_interval(secs => v.fallback_after_seconds) ELSE v.next_step_at END,
          failover_at = s.failover_at
        FROM s WHERE v.id = s.verification_id AND v.delivery_channel = s.delivery_channel AND v.id IN (SELECT id FROM locked)
        RETURNING v.id
      ),
      done AS (
        UPDATE send_jobs j SET status = 'sent', provider = s.provider, provider_failures = 0, last_error = NULL, updated_at = s.at
        FROM s WHERE j.verification_id = s.verification_id AND j.channel = s.channel AND j.verification_id IN (SELECT id FROM locked)
        RETURNING j.verification_id
      ),
      -- The cost ledger (contract 17): every send a provider took costs, a stale one (its verification moved on
      -- to another channel) as much as any.
      costed AS (
        INSERT INTO send_costs (verification_id, client_id, sent_at, channel, provider, region_code, route, cost, reported_amount, reported_currency)
        SELECT s.verification_id, v.client_id, s.at, s.channel, s.provider, v.region_code, s.route, s.cost::numeric, s.reported_amount, s.reported_currency
        FROM s JOIN verifications v ON v.id = s.verification_id
      ),
      -- Budgets (acceptedSpend below), named only while a client has one.
      ${budgets}
      kept AS (
        INSERT INTO provider_messages (provider, account, message_id, verification_id, attempt, created_at)
        SELECT DISTINCT ON (s.provider, s.account, s.message_id) s.provider, s.account, s.message_id, s.verification_id, s.attempt, s.at
        FROM s ORDER BY s.provider, s.account, s.message_id, s.at DESC
        ON CONFLICT (provider, account, message_id) DO UPDATE
          SET verification_id = excluded.verification_id, attempt = excluded.attempt, created_at = excluded.created_at,
            taken_from = NULLIF(provider_messages.verification_id, excluded.verification_id)
        RETURNING provider, account, message_id, verification_id, taken_from
      )
      -- The writing parts run to completion whether read or not.
      SELECT k.verification_id::text, k.provider, k.account, k.message_id, k.taken_from::text AS previous, ${parked} AS parked FROM kept k`.execute(this.db);
    // Keyed by the acceptance, not the verification alone: two acceptances of one send in a group (a resend, a
    // second part) each get their own row's answer, whichever order the rows come back in.
    const key = (verificationId: string, provider: string, account: string, messageId: string) => JSON.stringify([verificationId, provider, account, messageId]);
    const byAcceptance = new Map(result.rows.map((r) => [key(r.verification_id, r.provider, r.account, r.message_id), r]));
    const keptMeanwhile = this.keptCommits === keptBefore ? new Set<string>() : await this.keptFor(group);
    return group.map((s) => {
      const row = byAcceptance.get(key(s.verificationId, s.provider, s.account, s.messageId));
      const message = JSON.stringify([s.provider, s.account, s.messageId]);
      return { tookIdFrom: row?.previous ?? null, parked: row?.parked === true || keptMeanwhile.has(message) };
    });
  }

  /** Which of these sends' message ids have receipts kept for them, read after the acceptances committed. */
  private async keptFor(group: readonly SentRecord[]): Promise<Set<string>> {
    const ids = group.map((s) => sql`(${s.provider}::text, ${s.account}::text, ${s.messageId}::text)`);
    const { rows } = await sql<{ provider: string; account: string; message_id: string }>`
      SELECT DISTINCT provider, account, message_id FROM parked_receipts WHERE (provider, account, message_id) IN (VALUES ${sql.join(ids)})`.execute(this.db);
    return new Set(rows.map((r) => JSON.stringify([r.provider, r.account, r.message_id])));
  }

  find(clientId: string, id: string): Promise<Verification | null> {
    return isUuid(id) ? this.reads.add({ clientId, id }) : Promise.resolve(null);
  }

  /** Point reads of a group, in one query; another client's verification reads as missing. */
  private async readGroup(group: readonly { clientId: string; id: string }[]): Promise<(Verification | null)[]> {
    const rows = await this.db
      .selectFrom('verifications')
      .selectAll()
      .where('id', 'in', [...new Set(group.map((g) => g.id))])
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    return group.map((g) => {
      const row = byId.get(g.id);
      // An erased verification reads as missing (contract 20).
      return row && row.client_id === g.clientId && row.erased_at === null ? toVerification(row) : null;
    });
  }

  async findById(id: string): Promise<Verification | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.selectFrom('verifications').selectAll().where('id', '=', id).executeTakeFirst();
    return row && row.erased_at === null ? toVerification(row) : null;
  }

  /** The newest verifications of a number or with a reference, whichever client made them (the operator's search). */
  async search(by: { readonly phoneNumber: string } | { readonly reference: string }, limit: number): Promise<Verification[]> {
    const query = this.db.selectFrom('verifications').selectAll().orderBy('created_at', 'desc').limit(limit);
    // By number: each client's (client_id, phone_number, created_at) index, rather than an index of its own that
    // every create would pay for; clients are few.
    const rows = await ('phoneNumber' in by
      ? query.where('client_id', 'in', this.db.selectFrom('clients').select('id')).where('phone_number', '=', by.phoneNumber)
      : query.where('reference', '=', by.reference)
    ).execute();
    return rows.filter((r) => r.erased_at === null).map(toVerification);
  }

  async latestOfNumber(clientId: string, phoneNumber: string): Promise<Verification | null> {
    // The (client_id, phone_number, created_at) index serves it; the client's verifications of one number are few.
    const row = await this.db
      .selectFrom('verifications')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('phone_number', '=', phoneNumber)
      // The newest only: once it has used its attempts, an older code of the number must not be checked instead.
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toVerification(row) : null;
  }

  async parkedReceipts(
    limit: number,
    message?: { readonly provider: string; readonly account: string; readonly messageId: string },
  ): Promise<ParkedReceipt[]> {
    if (!message) {
      const keptBefore = this.keptCommits;
      const any = await this.db.selectNoFrom(({ exists, selectFrom }) => exists(selectFrom('parked_receipts').select('id')).as('any')).executeTakeFirst();
      // One committed while this read ran may not be in what it saw.
      this.receiptsMayBeKept = any?.any === true || this.keptCommits !== keptBefore;
      if (!this.receiptsMayBeKept) return [];
    }
    let query = this.db.selectFrom('parked_receipts as r').selectAll('r').orderBy('r.id').limit(limit);
    query = message
      ? query.where('r.provider', '=', message.provider).where('r.account', '=', message.account).where('r.message_id', '=', message.messageId)
      : query.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('provider_messages as m')
              .select('m.verification_id')
              .whereRef('m.provider', '=', 'r.provider')
              .whereRef('m.account', '=', 'r.account')
              .whereRef('m.message_id', '=', 'r.message_id'),
          ),
        );
    const rows = await query.execute();
    return rows.map((r) => ({
      id: String(r.id),
      provider: r.provider,
      account: r.account,
      receipt: {
        messageId: r.message_id,
        status: r.status as DeliveryReceipt['status'],
        detail: r.detail,
        at: r.reported_at === null ? null : new Date(r.reported_at),
      },
    }));
  }

  /** Forgets Idempotency-Keys recorded before `before`. */
  async pruneIdempotencyKeys(before: Date): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('created_at', '<', before).execute();
  }
}

/**
 * The part of writeSent's statement that moves budgets (contract 17, 0039), named only while a client has one.
 * Each acceptance's charge counts in its day and month, in place of one send's hold, which its admission counted
 * in the hold's day and month. The holds are taken after their verifications' locks, and the spend rows in key
 * order, as spend-store.ts takes them.
 */
const acceptedSpend = sql`
      holds AS (
        SELECT h.verification_id, h.client_id, trim_scale(h.amount / h.sends) AS one, h.sends, h.day FROM budget_holds h
        WHERE h.verification_id IN (SELECT id FROM locked) ORDER BY h.verification_id FOR UPDATE
      ),
      held_fewer AS (UPDATE budget_holds h SET amount = h.amount - holds.one, sends = h.sends - 1 FROM holds WHERE h.verification_id = holds.verification_id AND holds.sends > 1),
      held_gone AS (DELETE FROM budget_holds h USING holds WHERE h.verification_id = holds.verification_id AND holds.sends <= 1),
      spend_moves AS (
        SELECT m.client_id, x.period, x.starts, sum(m.amount) AS amount
        FROM (
          SELECT v.client_id, (s.at AT TIME ZONE 'UTC')::date AS day, s.charge AS amount FROM s JOIN verifications v ON v.id = s.verification_id
          UNION ALL
          SELECT holds.client_id, holds.day, -holds.one FROM holds
        ) m CROSS JOIN LATERAL (VALUES ('day', m.day), ('month', date_trunc('month', m.day)::date)) x (period, starts)
        GROUP BY 1, 2, 3
      ),
      spend_locked AS (
        SELECT c.client_id FROM client_spend c JOIN spend_moves m USING (client_id, period, starts) ORDER BY c.client_id, c.period, c.starts FOR UPDATE OF c
      ),
      spent AS (
        UPDATE client_spend c SET spent = c.spent + m.amount FROM spend_moves m
        WHERE c.client_id = m.client_id AND c.period = m.period AND c.starts = m.starts AND (SELECT count(*) FROM spend_locked) >= 0
      ),`;
