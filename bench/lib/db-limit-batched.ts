import { randomInt, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { servicePool, type DbLimitOptions, type DbLimitResult } from './db-limit.js';
import { PhoneSequence } from './phones.js';
import { seededId } from './seed.js';

/**
 * The batched database limit: the same statements the service sends, batched and group-committed exactly as
 * the service batches them, issued straight from `pg`. `concurrency` logical requesters each wait for their own
 * result; items handed in while a flush is in flight wait and go together in the next flush, one flush at a time
 * per queue (up to 500 items a flush). Operations per second is what the service's own batching could reach if
 * HTTP, auth, JSON and the domain cost nothing.
 *
 * Mirrors src/store/batcher.ts (the queue) and src/store/verification-store.ts (SqlVerificationStore:
 * createGroup, readGroup, saveGroup). The SQL text below was logged from SqlVerificationStore through a Kysely
 * `log` option (whitespace of the save statement condensed); keep it in step with that file.
 */
export interface BatchedDbLimitResult extends DbLimitResult {
  /** Per queue: flushes run and the mean number of items per flush. */
  readonly batches: Record<string, QueueStats>;
}

interface QueueStats {
  readonly flushes: number;
  readonly meanItems: number;
}

/** src/store/batcher.ts, with counters: one flush at a time, later arrivals go together in the next one. */
class Queue<T, R> {
  private queue: { item: T; resolve: (result: R) => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;
  flushes = 0;
  items = 0;

  constructor(
    private readonly flush: (items: readonly T[]) => Promise<readonly R[]>,
    private readonly maxBatch = 500,
  ) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.flushing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.flushes++;
      this.items += batch.length;
      try {
        const results = await this.flush(batch.map((b) => b.item));
        batch.forEach((b, i) => {
          if (i < results.length) b.resolve(results[i] as R);
          else b.reject(new Error('flush returned fewer results than items'));
        });
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.flushing = false;
  }

  stats(): QueueStats {
    return { flushes: this.flushes, meanItems: this.flushes ? Math.round((this.items / this.flushes) * 10) / 10 : 0 };
  }
}

/** `$from, ..., $from+count-1` in parentheses: one row of a VALUES list or an IN list. */
const params = (from: number, count: number, casts?: readonly string[]) =>
  `(${Array.from({ length: count }, (_, i) => `$${from + i}${casts?.[i] ? `::${casts[i]}` : ''}`).join(', ')})`;
const rowsOf = (rows: number, width: number, casts?: readonly string[], first = 1) =>
  Array.from({ length: rows }, (_, r) => params(first + r * width, width, casts)).join(', ');

/** SqlVerificationStore.createGroup. */
const createSql = {
  begin: 'begin',
  lock: 'SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k ORDER BY k',
  // Phone history and the fraud limits' reads in one statement; the bench's service has prefix velocity on
  // (counted, never reached), no daily quota and no throttled country, so their parts get empty arrays.
  states:
    "SELECT 'phone' AS kind, v.client_id::text || '|' || v.phone_number AS key, 0 AS n, NULL::timestamptz AS until, " +
    'v.created_at AS oldest FROM verifications v WHERE (v.client_id, v.phone_number) IN (SELECT * FROM unnest($1::uuid[], $2::text[])) ' +
    'AND v.created_at > $3 ' +
    "UNION ALL SELECT 'sends', s.client_id::text || '|' || to_char(s.day, 'YYYY-MM-DD'), s.sends, NULL, NULL " +
    'FROM client_daily_sends s WHERE (s.client_id, s.day) IN (SELECT * FROM unnest($4::uuid[], $5::date[])) ' +
    "UNION ALL SELECT 'prefix', p.prefix, (SELECT count(*)::int FROM verifications v WHERE left(v.phone_number, -3) = p.prefix " +
    'AND NOT v.test_number AND v.created_at > greatest($6::timestamptz, b.blocked_until)), b.blocked_until, NULL ' +
    'FROM unnest($7::text[]) AS p (prefix) LEFT JOIN prefix_blocks b ON b.prefix = p.prefix ' +
    "UNION ALL SELECT 'country', c.region || '|' || c.cc, count(v.id)::int, NULL, min(v.created_at) " +
    'FROM unnest($8::text[], $9::text[], $10::timestamptz[]) AS c (region, cc, since) ' +
    'LEFT JOIN verifications v ON v.client_id = ANY(ARRAY(SELECT id FROM clients)) AND v.created_at > c.since ' +
    'AND v.region_code = c.region AND v.country_code = c.cc AND NOT v.test_number GROUP BY c.region, c.cc',
  // The verifications and their send jobs in one statement.
  insert: (rows: number) =>
    'with "inserted" as (insert into "verifications" ("id", "client_id", "type", "status", "otp", "phone_number", "country_code", ' +
    '"paired_number", "counter", "webhook_url", "reference", "created_at", "updated_at", "expires_at", "last_send_at") values ' +
    `${rowsOf(rows, 15)}) insert into "send_jobs" ("verification_id", "channel", "sender", "status", "attempts", "next_attempt_at", ` +
    '"last_error", "created_at", "updated_at") values ' +
    rowsOf(rows, 9, undefined, 1 + rows * 15),
  commit: 'commit',
};

/** SqlVerificationStore.readGroup. */
const readSql = (ids: number) => `select * from "verifications" where "id" in ${params(1, ids)}`;

/** SqlVerificationStore.saveGroup, for events without a webhook (no pg_notify). */
const saveSql = (changes: number, events: number) => {
  const changeCasts = ['uuid', 'text', 'int', 'text', 'int', 'timestamptz'];
  const eventCasts = ['uuid', 'uuid', 'uuid', 'text', 'jsonb', 'text', 'text', 'int', 'timestamptz', 'timestamptz',
    'timestamptz', 'timestamptz', 'timestamptz'];
  const eventValues = Array.from({ length: events }, (_, r) => params(1 + changes * 6 + r * 13, 13, eventCasts)).join(', ');
  const recorded = events
    ? `, recorded AS (
          INSERT INTO events (id, client_id, verification_id, kind, payload, webhook_url, delivery_status, attempts,
            next_attempt_at, lease_until, attempt_started_at, created_at, updated_at)
          SELECT e.* FROM (VALUES ${eventValues}) AS e (id, client_id, verification_id, kind, payload, webhook_url, delivery_status, attempts,
            next_attempt_at, lease_until, attempt_started_at, created_at, updated_at)
          WHERE e.verification_id IN (SELECT id FROM moved)
        )`
    : '';
  return `
      WITH r (id, prev_status, prev_counter, status, counter, updated_at) AS (VALUES ${rowsOf(changes, 6, changeCasts)}),
      moved AS (
        UPDATE verifications v SET status = r.status, counter = r.counter, updated_at = r.updated_at
        FROM r
        WHERE v.id = r.id AND v.status = r.prev_status AND v.counter = r.prev_counter
        RETURNING v.id
      )${recorded}
      SELECT (SELECT array_agg(id) FROM moved) AS moved`;
};

/**
 * Runs `op` from `concurrency` logical requesters for `seconds`; the ops hand their work to queues, whose flushes
 * take a connection from a pool of `concurrency` (as the service's pool of DATABASE_POOL_SIZE).
 */
async function drive(
  o: DbLimitOptions,
  setUp: (pool: pg.Pool) => { op: (n: number) => Promise<void>; queues: Record<string, { stats(): QueueStats }> },
): Promise<BatchedDbLimitResult> {
  const pool = servicePool(o.url, o.concurrency);
  pool.on('error', () => undefined);
  const { op, queues } = setUp(pool);
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const start = performance.now();
  const end = start + o.seconds * 1000;
  const requester = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await op(n++);
        latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: o.concurrency }, requester));
  } finally {
    await pool.end();
  }
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  const batches = Object.fromEntries(Object.entries(queues).map(([name, q]) => [name, q.stats()]));
  return { opsPerSecond: latencies.length / elapsed, p50: pct(50), p99: pct(99), ops: latencies.length, errors, batches };
}

/** One flush on one pooled connection. */
async function withClient<T>(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    return await work(c);
  } finally {
    c.release();
  }
}

interface Create {
  readonly id: string;
  readonly phone: string;
  readonly otp: string;
  readonly now: Date;
  readonly lookBackFrom: Date;
}

/**
 * Create: each group of concurrent creates in one transaction (createGroup): the advisory locks of its sorted
 * keys in one statement, one read of its numbers' history and its fraud limits, one statement inserting into
 * verifications and send_jobs. Every number is new, so every create is accepted. The send jobs are written as the service
 * writes them when it sends the code itself (claimed, attempt 1), but held a day ahead rather than for the send
 * lease, so the running service's send worker leaves them alone.
 */
export async function dbLimitCreateBatched(o: DbLimitOptions & { readonly phoneOffset: number }) {
  return drive(o, (pool) => {
    const creates = new Queue<Create, boolean>((group) =>
      withClient(pool, async (c) => {
        await c.query(createSql.begin);
        try {
          const keyOf = (x: Create) => `${o.clientId}|${x.phone}`;
          const keys = [...new Set(group.map(keyOf))].sort();
          await c.query(createSql.lock, [keys]);
          const since = group.reduce((min, x) => (x.lookBackFrom < min ? x.lookBackFrom : min), group[0]?.lookBackFrom ?? new Date());
          const prefixes = [...new Set(group.map((x) => x.phone.slice(0, -3)))];
          await c.query(createSql.states, [
            group.map(() => o.clientId), group.map((x) => x.phone), since, [], [], new Date(Date.now() - 3_600_000), prefixes, [], [], [],
          ]);
          await c.query(createSql.insert(group.length), [
            ...group.flatMap((x) => [
              x.id, o.clientId, 'SMS', 'PENDING', x.otp, x.phone, '+234', '09010000000', 0, null, null, x.now, x.now,
              new Date(x.now.getTime() + 3_600_000), x.now,
            ]),
            ...group.flatMap((x) => [
              x.id, 'sms', '+2349010000000', 'pending', 1, new Date(x.now.getTime() + 86_400_000), null, x.now, x.now,
            ]),
          ]);
          await c.query(createSql.commit);
        } catch (err) {
          await c.query('rollback').catch(() => undefined);
          throw err;
        }
        return group.map(() => true);
      }),
    );
    const op = async (n: number) => {
      const now = new Date();
      await creates.add({
        id: randomUUID(),
        phone: PhoneSequence.e164(o.phoneOffset + n),
        otp: String(randomInt(1_000_000)).padStart(6, '0'),
        now,
        lookBackFrom: new Date(now.getTime() - 600_000),
      });
    };
    return { op, queues: { create: creates } };
  });
}

interface Row {
  id: string;
  client_id: string;
  otp: string;
  counter: number;
  status: string;
  created_at: Date;
  phone_number: string;
}

/** readGroup: the distinct ids of a group in one IN query; another client's row reads as missing. */
function readQueue(pool: pg.Pool) {
  return new Queue<{ clientId: string; id: string }, Row | null>((group) =>
    withClient(pool, async (c) => {
      const ids = [...new Set(group.map((g) => g.id))];
      const { rows } = await c.query<Row>(readSql(ids.length), ids);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return group.map((g) => {
        const row = byId.get(g.id);
        return row && row.client_id === g.clientId ? row : null;
      });
    }),
  );
}

/** Fetch: point reads of random seeded ids, batched into one IN query per flush (readGroup). */
export async function dbLimitFetchBatched(o: DbLimitOptions & { readonly series: string; readonly count: number }) {
  return drive(o, (pool) => {
    const reads = readQueue(pool);
    const op = async () => {
      const row = await reads.add({ clientId: o.clientId, id: seededId(o.series, randomInt(o.count)) });
      if (!row) throw new Error('seeded verification missing');
    };
    return { op, queues: { read: reads } };
  });
}

interface Save {
  readonly id: string;
  readonly status: string;
  readonly counter: number;
  readonly updatedAt: Date;
  readonly event: readonly unknown[];
}

/**
 * Verify with the right code, each requester on a different PENDING seeded row: the batched read (readGroup),
 * then the batched save (saveGroup: one statement for the group, moving each row only if unchanged and inserting
 * the events of the rows that moved). The two queues run independently, as the service's do. `moved` counts
 * the operations whose save moved its row; once the seeded rows run out, reads of rows verified already count
 * as errors (the service would answer 409), not as operations.
 */
export async function dbLimitVerifyBatched(o: DbLimitOptions & { readonly series: string; readonly count: number }) {
  let moved = 0;
  const result = await drive(o, (pool) => {
    const reads = readQueue(pool);
    const saves = new Queue<Save, boolean>((group) =>
      withClient(pool, async (c) => {
        const first = new Map<string, Save>();
        for (const s of group) if (!first.has(s.id)) first.set(s.id, s);
        const distinct = [...first.values()];
        const values = [
          ...distinct.flatMap((s) => [s.id, s.status, s.counter, 'SUCCESS', s.counter + 1, s.updatedAt]),
          ...distinct.flatMap((s) => s.event),
        ];
        const { rows } = await c.query<{ moved: string[] | null }>(saveSql(distinct.length, distinct.length), values);
        const done = new Set(rows[0]?.moved ?? []);
        return group.map((s) => first.get(s.id) === s && done.has(s.id));
      }),
    );
    const op = async (n: number) => {
      const id = seededId(o.series, n % o.count);
      const row = await reads.add({ clientId: o.clientId, id });
      if (!row) throw new Error(`seeded verification ${id} missing`);
      // The service would answer 409 without a save (decideVerify: not pending): not a successful operation.
      if (row.status !== 'PENDING') throw new Error(`seeded verification ${id} already verified`);
      const now = new Date();
      const payload = {
        event: 'action.otp.success',
        data: {
          id,
          otp: row.otp,
          type: 'SMS',
          status: 'SUCCESS',
          createdAt: row.created_at.toISOString(),
          countryCode: '+234',
          phoneNumber: row.phone_number,
          reference: null,
        },
      };
      // eventRow() of an event without a webhook: kept as a record only, not due, not leased.
      const event = [randomUUID(), o.clientId, id, 'action.otp.success', JSON.stringify(payload), null, 'none', 0, null, null, null, now, now];
      if (await saves.add({ id, status: row.status, counter: row.counter, updatedAt: now, event })) moved++;
    };
    return { op, queues: { read: reads, save: saves } };
  });
  return { ...result, moved };
}
