import { randomInt, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { setServiceSessions } from '../../src/store/database.js';
import { PhoneSequence } from './phones.js';
import { seededId } from './seed.js';

/**
 * The database limit: the statements each endpoint runs (as Kysely sends them: parameterised, one round trip
 * each, in the same transactions), issued straight from `pg` by `concurrency` workers against the same
 * PostgreSQL. Operations per second is what the service could reach if HTTP, auth, JSON and the domain cost
 * nothing. Mirrors src/store/verification-store.ts and src/domain/verification-service.ts.
 */
export interface DbLimitResult {
  readonly opsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly ops: number;
  readonly errors: number;
}

const createSql = {
  lock: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
  history: 'select "created_at" from "verifications" where "client_id" = $1 and "phone_number" = $2 and "created_at" > $3',
  // The verification and its send job in one statement, as the service writes them.
  insert:
    'with "inserted" as (insert into "verifications" ("id", "client_id", "type", "status", "otp", "phone_number", "country_code", ' +
    '"paired_number", "counter", "webhook_url", "reference", "created_at", "updated_at", "expires_at", "last_send_at") ' +
    'values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)) ' +
    'insert into "send_jobs" ("verification_id", "channel", "sender", "status", "attempts", "next_attempt_at", "last_error", ' +
    '"created_at", "updated_at") values ($1, $16, $17, $18, $19, $20, $21, $12, $13)',
};

const fetchSql = 'select * from "verifications" where "id" = $1 and "client_id" = $2';

/** Verify is optimistic: a plain read, then one statement that moves the row if unchanged and records the event. */
const verifySql = {
  select: fetchSql,
  save:
    'WITH moved AS (UPDATE verifications SET status = $1, counter = $2, updated_at = $3 ' +
    'WHERE id = $4 AND status = $5 AND counter = $6 RETURNING id), recorded AS (' +
    'INSERT INTO events (id, client_id, verification_id, kind, payload, webhook_url, delivery_status, attempts, ' +
    'next_attempt_at, lease_until, created_at, updated_at) SELECT e.* FROM moved, (VALUES ($7::uuid, $8::uuid, ' +
    '$9::uuid, $10::text, $11::jsonb, $12::text, $13::text, 0, $14::timestamptz, NULL::timestamptz, ' +
    '$15::timestamptz, $16::timestamptz)) AS e) SELECT (SELECT count(*) FROM moved)::int AS moved',
};

/** A pool whose sessions are set as the service sets its own. */
export function servicePool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  setServiceSessions(pool);
  return pool;
}

/** Runs `op` from `concurrency` workers for `seconds`, each op on a connection taken from the pool. */
async function drive(
  url: string,
  concurrency: number,
  seconds: number,
  op: (client: pg.PoolClient, n: number) => Promise<void>,
): Promise<DbLimitResult> {
  const pool = servicePool(url, concurrency);
  pool.on('error', () => undefined);
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const client = await pool.connect();
      try {
        await op(client, n++);
        latencies.push(performance.now() - t0);
      } catch {
        errors++;
        await client.query('ROLLBACK').catch(() => undefined);
      } finally {
        client.release();
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.end();
  }
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return { opsPerSecond: latencies.length / elapsed, p50: pct(50), p99: pct(99), ops: latencies.length, errors };
}

export interface DbLimitOptions {
  readonly url: string;
  readonly clientId: string;
  readonly concurrency: number;
  readonly seconds: number;
}

/** Create: advisory lock, phone history, the verification and its send job inserted, in one transaction. */
export async function dbLimitCreate(o: DbLimitOptions & { readonly phoneOffset: number }): Promise<DbLimitResult> {
  return drive(o.url, o.concurrency, o.seconds, async (c, n) => {
    const phone = PhoneSequence.e164(o.phoneOffset + n);
    const now = new Date();
    const id = randomUUID();
    const otp = String(randomInt(1_000_000)).padStart(6, '0');
    await c.query('BEGIN');
    await c.query(createSql.lock, [`${o.clientId}|${phone}`]);
    const lookBack = new Date(now.getTime() - 600_000);
    await c.query(createSql.history, [o.clientId, phone, lookBack]);
    const expires = new Date(now.getTime() + 3_600_000);
    // The send job is due in a day: the same insert (and partial-index entry), but the running service's send
    // worker leaves it alone, so the baseline measures these statements and nothing else.
    const due = new Date(now.getTime() + 86_400_000);
    await c.query(createSql.insert, [
      id, o.clientId, 'SMS', 'PENDING', otp, phone, '+234', '09010000000', 0, null, null, now, now, expires, now,
      'sms', '+2349010000000', 'pending', 0, due, null,
    ]);
    await c.query('COMMIT');
  });
}

/** Fetch: a point select by id and client id, over a spread of `count` seeded ids. */
export async function dbLimitFetch(o: DbLimitOptions & { readonly series: string; readonly count: number }) {
  return drive(o.url, o.concurrency, o.seconds, async (c) => {
    await c.query(fetchSql, [seededId(o.series, randomInt(o.count)), o.clientId]);
  });
}

/**
 * Verify with the right code: the read, then the save with its event in one statement (as
 * SqlVerificationStore.saveIfUnchanged sends it), each on a different PENDING seeded row (so every
 * operation does the real update and outbox insert).
 */
export async function dbLimitVerify(o: DbLimitOptions & { readonly series: string; readonly count: number }) {
  return drive(o.url, o.concurrency, o.seconds, async (c, n) => {
    const id = seededId(o.series, n % o.count);
    const now = new Date();
    const { rows } = await c.query<{ otp: string; counter: number; created_at: Date; phone_number: string }>(
      verifySql.select,
      [id, o.clientId],
    );
    const row = rows[0];
    if (!row) throw new Error(`seeded verification ${id} missing`);
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
    await c.query(verifySql.save, [
      'SUCCESS', row.counter + 1, now, id, 'PENDING', row.counter,
      randomUUID(), o.clientId, id, 'action.otp.success', JSON.stringify(payload), null, 'none', null, now, now,
    ]);
  });
}
