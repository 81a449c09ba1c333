import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { OutboxEvent } from '../domain/events.js';
import type { Verification, VerificationStatus, VerificationType } from '../domain/verification.js';
import type { LimitDecision, PhoneHistory } from '../domain/limits.js';
import type {
  Channel,
  IdempotencyClaim,
  LimitedCreate,
  VerificationStore,
  VerificationTx,
} from '../domain/verification-store.js';
import { Batcher } from './batcher.js';
import type { Database, VerificationsTable } from './schema.js';
import { isUuid } from './uuid.js';
import { notifyWorkers, webhookChannel } from './webhook-store.js';

/** Verifications, their send jobs, outbox events and idempotency keys, in PostgreSQL or PGlite. */
/** What happens around the outbox writes of a SqlVerificationStore. */
export interface OutboxHooks {
  /** Events due for a delivery worker were committed: wake it. */
  readonly onEventsDue?: (count: number) => void;
  /**
   * When set, the events of verify calls are written already claimed by this process for `leaseMs` and handed
   * to `deliver` right after the commit, so delivery costs no queue read; should this process die first, the
   * lease runs out and any worker delivers them.
   */
  readonly deliverOnCommit?: { readonly leaseMs: number; deliver(events: readonly OutboxEvent[]): void };
  /** PostgreSQL: also NOTIFY, in the writing statement, so delivery workers in other processes wake on commit. */
  readonly notifyOtherProcesses?: boolean;
}

/** Verifications, their send jobs, outbox events and idempotency keys, in PostgreSQL or PGlite. */
export class SqlVerificationStore implements VerificationStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly hooks: OutboxHooks = {},
  ) {}

  /** Creates arriving while a group is being committed wait and go together in the next group. */
  private readonly creates = new Batcher<LimitedCreate, LimitDecision>((group) => this.createGroup(group));

  createIfAllowed(create: LimitedCreate): Promise<LimitDecision> {
    return this.creates.add(create);
  }

  /**
   * One transaction for a group of creates, in a fixed number of round trips whatever its size: lock every
   * number (in a fixed order, so concurrent groups on other instances cannot deadlock), read their recent
   * verifications, decide each create in turn (an accepted one counts for the next of the same number),
   * then insert the accepted verifications and their send jobs.
   */
  private async createGroup(group: readonly LimitedCreate[]): Promise<LimitDecision[]> {
    const keyOf = (c: LimitedCreate) => phoneLockKey(c.verification.clientId, c.verification.phoneNumber);
    return this.db.transaction().execute(async (trx) => {
      const keys = [...new Set(group.map(keyOf))].sort();
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(${keys}::text[]) AS k ORDER BY k`.execute(trx);
      const since = group.reduce((min, c) => (c.lookBackFrom < min ? c.lookBackFrom : min), group[0]?.lookBackFrom ?? new Date());
      const recent = await trx
        .selectFrom('verifications')
        .select(['client_id', 'phone_number', 'created_at'])
        .where(sql<boolean>`(client_id, phone_number) IN (SELECT * FROM unnest(${group.map((c) => c.verification.clientId)}::uuid[], ${group.map((c) => c.verification.phoneNumber)}::text[]))`)
        .where('created_at', '>', since)
        .execute();
      const times = new Map<string, Date[]>();
      for (const r of recent) {
        const key = phoneLockKey(r.client_id, r.phone_number);
        times.set(key, [...(times.get(key) ?? []), r.created_at]);
      }
      const decisions = group.map((c) => {
        const seen = times.get(keyOf(c)) ?? [];
        const decision = c.decide(historyOf(seen, c.lookBackFrom, c.windowFrom));
        if (decision.allowed) times.set(keyOf(c), [...seen, c.verification.createdAt]);
        return decision;
      });
      const accepted = group.filter((_, i) => decisions[i]?.allowed);
      if (accepted.length > 0) {
        await trx.insertInto('verifications').values(accepted.map((c) => toRow(c.verification))).execute();
        await trx
          .insertInto('send_jobs')
          .values(accepted.map((c) => sendJobRow(c.verification.id, c.channel, c.sender, c.verification.createdAt, c.claimedUntil)))
          .execute();
      }
      return decisions;
    });
  }

  async transaction<T>(work: (tx: VerificationTx) => Promise<T>): Promise<T> {
    let events = 0;
    const result = await this.db.transaction().execute(async (trx) => {
      const tx = new SqlVerificationTx(
        trx,
        (n) => {
          events += n;
        },
        this.hooks.notifyOtherProcesses ?? false,
      );
      return work(tx);
    });
    if (events > 0) this.hooks.onEventsDue?.(events);
    return result;
  }

  /** Concurrent saves go together in one statement (see saveGroup). */
  private readonly saves = new Batcher<Save, boolean>((group) => this.saveGroup(group));
  /** Concurrent point reads go together in one query. */
  private readonly reads = new Batcher<{ clientId: string; id: string }, Verification | null>((group) => this.readGroup(group));

  saveIfUnchanged(previous: Verification, next: Verification, events: readonly OutboxEvent[]): Promise<boolean> {
    return this.saves.add({ previous, next, events });
  }

  /**
   * One statement, so one round trip and one commit for the whole group: moves each verification to its
   * `next` only if it is still as its `previous` was read (same status and counter), and records the events
   * of those that moved in the same statement, so a change and its events commit together or not at all.
   * A verification saved twice in one group is saved once: the later save reports false and its caller
   * reads again, as it would after losing any race.
   */
  private async saveGroup(group: readonly Save[]): Promise<boolean[]> {
    const first = new Map<string, Save>();
    for (const save of group) if (!first.has(save.previous.id)) first.set(save.previous.id, save);
    const saves = [...first.values()];
    const changes = saves.map(
      ({ previous: p, next: n }) =>
        sql`(${p.id}::uuid, ${p.status}::text, ${p.counter}::int, ${n.status}::text, ${n.counter}::int, ${n.updatedAt}::timestamptz)`,
    );
    const claim = this.hooks.deliverOnCommit;
    const now = saves.reduce((latest, s) => (s.next.updatedAt > latest ? s.next.updatedAt : latest), new Date(0));
    const events = saves.flatMap((s) =>
      s.events.map((e) => eventRow(e, claim && e.webhookUrl ? new Date(now.getTime() + claim.leaseMs) : null)),
    );
    const recorded = events.length
      ? sql`, recorded AS (
          INSERT INTO events (id, client_id, verification_id, kind, payload, webhook_url, delivery_status, attempts,
            next_attempt_at, lease_until, attempt_started_at, created_at, updated_at)
          SELECT e.* FROM (VALUES ${sql.join(
            events.map(
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
    const deliverable = events.filter((e) => e.webhook_url !== null);
    const notify =
      deliverable.length > 0 && this.hooks.notifyOtherProcesses && !claim
        ? sql`, (SELECT pg_notify(${webhookChannel}, '') WHERE EXISTS (SELECT 1 FROM moved)) AS notified`
        : sql``;
    const result = await sql<{ moved: string[] | null }>`
      WITH r (id, prev_status, prev_counter, status, counter, updated_at) AS (VALUES ${sql.join(changes)}),
      moved AS (
        UPDATE verifications v SET status = r.status, counter = r.counter, updated_at = r.updated_at
        FROM r
        WHERE v.id = r.id AND v.status = r.prev_status AND v.counter = r.prev_counter
        RETURNING v.id
      )${recorded}
      SELECT (SELECT array_agg(id) FROM moved) AS moved${notify}`.execute(this.db);
    const moved = new Set(result.rows[0]?.moved ?? []);
    const committed = saves.flatMap((s) => (moved.has(s.previous.id) ? s.events.filter((e) => e.webhookUrl) : []));
    if (committed.length > 0) {
      if (claim) claim.deliver(committed);
      else this.hooks.onEventsDue?.(committed.length);
    }
    return group.map((save) => first.get(save.previous.id) === save && moved.has(save.previous.id));
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
      return row && row.client_id === g.clientId ? toVerification(row) : null;
    });
  }

  /** Forgets Idempotency-Keys recorded before `before`. */
  async pruneIdempotencyKeys(before: Date): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('created_at', '<', before).execute();
  }

  async findById(id: string): Promise<Verification | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.selectFrom('verifications').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toVerification(row) : null;
  }
}

class SqlVerificationTx implements VerificationTx {
  constructor(
    private readonly trx: Transaction<Database>,
    private readonly countEvents: (n: number) => void,
    private readonly notifyOtherProcesses: boolean,
  ) {}

  async lockPhone(clientId: string, phoneNumber: string): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${phoneLockKey(clientId, phoneNumber)}, 0))`.execute(this.trx);
  }

  async phoneHistory(clientId: string, phoneNumber: string, lookBackFrom: Date, windowFrom: Date) {
    const rows = await this.trx
      .selectFrom('verifications')
      .select('created_at')
      .where('client_id', '=', clientId)
      .where('phone_number', '=', phoneNumber)
      .where('created_at', '>', lookBackFrom)
      .execute();
    return historyOf(
      rows.map((r) => r.created_at),
      lookBackFrom,
      windowFrom,
    );
  }

  async claimIdempotencyKey(
    clientId: string,
    key: string,
    fingerprint: string,
    verificationId: string,
    now: Date,
    staleBefore: Date,
  ): Promise<IdempotencyClaim> {
    // The upsert waits on a concurrent claim of the same key; a stale record is taken over.
    const claimed = await this.trx
      .insertInto('idempotency_keys')
      .values({ client_id: clientId, key, fingerprint, verification_id: verificationId, created_at: now })
      .onConflict((oc) =>
        oc
          .columns(['client_id', 'key'])
          .doUpdateSet({ fingerprint, verification_id: verificationId, created_at: now })
          .where('idempotency_keys.created_at', '<', staleBefore),
      )
      .returning('key')
      .executeTakeFirst();
    if (claimed) return { kind: 'claimed' };
    const existing = await this.trx
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'verification_id'])
      .where('client_id', '=', clientId)
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    return { kind: 'existing', fingerprint: existing.fingerprint, verificationId: existing.verification_id };
  }

  async insert(v: Verification): Promise<void> {
    await this.trx.insertInto('verifications').values(toRow(v)).execute();
  }

  async enqueueSend(
    verificationId: string,
    channel: Channel,
    sender: string,
    now: Date,
    claimedUntil: Date | null,
  ): Promise<void> {
    await this.trx.insertInto('send_jobs').values(sendJobRow(verificationId, channel, sender, now, claimedUntil)).execute();
  }

  async findForUpdate(id: string, clientId?: string): Promise<Verification | null> {
    if (!isUuid(id)) return null;
    let query = this.trx.selectFrom('verifications').selectAll().where('id', '=', id);
    if (clientId !== undefined) query = query.where('client_id', '=', clientId);
    const row = await query.forUpdate().executeTakeFirst();
    return row ? toVerification(row) : null;
  }

  async update(v: Verification): Promise<void> {
    await this.trx
      .updateTable('verifications')
      .set({ status: v.status, counter: v.counter, updated_at: v.updatedAt })
      .where('id', '=', v.id)
      .execute();
  }

  async expireDue(now: Date, limit: number): Promise<Verification[]> {
    const rows = await this.trx
      .updateTable('verifications')
      .set({ status: 'EXPIRED', updated_at: sql`expires_at` })
      .where('id', 'in', (qb) =>
        qb
          .selectFrom('verifications')
          .select('id')
          .where('status', '=', 'PENDING')
          .where('expires_at', '<=', now)
          .orderBy('expires_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .execute();
    return rows.map(toVerification);
  }

  async recordEvents(events: readonly OutboxEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.trx.insertInto('events').values(events.map((e) => eventRow(e, null))).execute();
    const deliverable = events.filter((e) => e.webhookUrl).length;
    if (deliverable > 0) await notifyWorkers(this.trx, this.notifyOtherProcesses);
    this.countEvents(deliverable);
  }
}

/** A save of one verify (VerificationStore.saveIfUnchanged). */
interface Save {
  readonly previous: Verification;
  readonly next: Verification;
  readonly events: readonly OutboxEvent[];
}

/** The advisory lock key that serialises creates of one number by one client, on every instance. */
function phoneLockKey(clientId: string, phoneNumber: string): string {
  return `${clientId}|${phoneNumber}`;
}

/** What the phone limits look at, from the creation times of a number's recent verifications. */
function historyOf(createdAt: readonly Date[], lookBackFrom: Date, windowFrom: Date): PhoneHistory {
  const inLookBack = createdAt.filter((t) => t > lookBackFrom);
  const inWindow = createdAt.filter((t) => t > windowFrom);
  const earliest = (ts: readonly Date[]) => ts.reduce<Date | null>((m, t) => (m === null || t < m ? t : m), null);
  const latest = (ts: readonly Date[]) => ts.reduce<Date | null>((m, t) => (m === null || t > m ? t : m), null);
  return { countInWindow: inWindow.length, oldestInWindow: earliest(inWindow), latest: latest(inLookBack) };
}

/** A send job: due at once, or held until `claimedUntil` by the process that makes the first attempt itself. */
function sendJobRow(verificationId: string, channel: Channel, sender: string, now: Date, claimedUntil: Date | null) {
  return {
    verification_id: verificationId,
    channel,
    sender,
    status: 'pending',
    attempts: claimedUntil ? 1 : 0,
    next_attempt_at: claimedUntil ?? now,
    last_error: null,
    created_at: now,
    updated_at: now,
  };
}

/**
 * The outbox row of an event; events without a destination are kept as a record only. With `claimedUntil`
 * the row is written as the first attempt already under way, leased to the writing process until then.
 */
function eventRow(e: OutboxEvent, claimedUntil: Date | null) {
  return {
    id: e.id,
    client_id: e.clientId,
    verification_id: e.verificationId,
    kind: e.kind,
    payload: JSON.stringify(e.payload),
    webhook_url: e.webhookUrl,
    delivery_status: e.webhookUrl ? 'pending' : 'none',
    attempts: claimedUntil ? 1 : 0,
    // A claimed event falls due again only when its lease runs out.
    next_attempt_at: e.webhookUrl ? (claimedUntil ?? e.createdAt) : null,
    lease_until: claimedUntil,
    attempt_started_at: claimedUntil ? e.createdAt : null,
    created_at: e.createdAt,
    updated_at: e.createdAt,
  };
}

function toRow(v: Verification): Insertable<VerificationsTable> {
  return {
    id: v.id,
    client_id: v.clientId,
    type: v.type,
    status: v.status,
    otp: v.otp,
    phone_number: v.phoneNumber,
    country_code: v.countryCode,
    paired_number: v.pairedNumber,
    counter: v.counter,
    webhook_url: v.webhookUrl,
    reference: v.reference,
    created_at: v.createdAt,
    updated_at: v.updatedAt,
    expires_at: v.expiresAt,
  };
}

export function toVerification(row: Selectable<VerificationsTable>): Verification {
  return {
    id: row.id,
    clientId: row.client_id,
    type: row.type as VerificationType,
    status: row.status as VerificationStatus,
    otp: row.otp,
    phoneNumber: row.phone_number,
    countryCode: row.country_code,
    pairedNumber: row.paired_number,
    counter: row.counter,
    webhookUrl: row.webhook_url,
    reference: row.reference,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  };
}
