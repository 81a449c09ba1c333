import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { UnavailableError } from '../../src/domain/unavailable.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { vacuumEmbedded } from '../../src/store/embedded-vacuum.js';
import { settlesWithin } from '../support/api.js';
import { openEmbedded } from '../support/databases.js';



describe('embedded database in its worker thread', () => {
  const opened: Db[] = [];
  after(async () => {
    for (const db of opened) await db.close();
  });

  it('runs on a worker thread, not on this one', async () => {
    const db = await openEmbedded();
    opened.push(db);
    assert.ok(db.thread, 'the embedded database has its thread');
  });

  it('gives a PostgreSQL error back with its fields (code, constraint, table, detail), as pg raises it', async () => {
    const db = await openEmbedded();
    opened.push(db);
    await sql`CREATE TABLE t (k text CONSTRAINT t_k_key UNIQUE, n int NOT NULL)`.execute(db.db);
    await sql`INSERT INTO t VALUES ('a', 1)`.execute(db.db);
    const err: unknown = await sql`INSERT INTO t VALUES ('a', 2)`.execute(db.db).then(
      () => assert.fail('a duplicate was accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error);
    const fields = err as Error & Record<string, unknown>;
    assert.equal(fields.code, '23505');
    assert.equal(fields.constraint, 't_k_key');
    assert.equal(fields.table, 't');
    assert.equal(fields.schema, 'public');
    assert.equal(fields.severity, 'ERROR');
    assert.match(String(fields.detail), /Key \(k\)=\(a\) already exists/);
    assert.match(err.message, /duplicate key value violates unique constraint "t_k_key"/);

    const notNull = (await sql`INSERT INTO t (k) VALUES ('b')`.execute(db.db).catch((e: unknown) => e)) as Record<string, unknown>;
    assert.equal(notNull.code, '23502');
    assert.equal(notNull.column, 'n');
    // A transaction that failed is rolled back, and the session serves the next holder.
    const rows = await sql<{ n: number }>`SELECT count(*)::int AS n FROM t`.execute(db.db);
    assert.equal(rows.rows[0]?.n, 1);
  });

  it('returns rows as PGlite parses them: dates, byte arrays, numbers, nulls', async () => {
    const db = await openEmbedded();
    opened.push(db);
    const { rows } = await sql<{ at: Date; b: Uint8Array; n: number; z: null }>`
      SELECT '2026-01-02T03:04:05Z'::timestamptz AS at, '\\x0102'::bytea AS b, 7::int AS n, NULL AS z`.execute(db.db);
    assert.deepEqual(rows, [{ at: new Date('2026-01-02T03:04:05Z'), b: new Uint8Array([1, 2]), n: 7, z: null }]);
  });

  it('is vacuumed and analysed by the service, PGlite running no autovacuum: the planner learns the table sizes', async () => {
    const db = await openEmbedded();
    opened.push(db);
    await sql`CREATE TABLE grown (n int)`.execute(db.db);
    await sql`INSERT INTO grown SELECT generate_series(1, 1000)`.execute(db.db);
    const tuples = async () =>
      (await sql<{ n: number }>`SELECT reltuples::int AS n FROM pg_class WHERE relname = 'grown'`.execute(db.db)).rows[0]?.n;
    assert.equal(await tuples(), -1, 'never analysed yet');
    await vacuumEmbedded(db.db);
    assert.equal(await tuples(), 1000);
  });

  it('a thread that dies mid-query fails that query and every later one with UnavailableError, and says it is lost', async () => {
    const db = await openEmbedded();
    opened.push(db);
    const thread = db.thread;
    assert.ok(thread);
    const slow = sql`SELECT pg_sleep(30)`.execute(db.db);
    // Queued behind the slow one for the single session.
    const queued = db.db.selectFrom('clients').select('id').execute();
    // Its turn came: the statement is in the thread.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await thread.kill();
    const [a, b] = await settlesWithin(Promise.allSettled([slow, queued]), 10_000, 'a query to a dead thread');
    for (const outcome of [a, b]) {
      assert.equal(outcome?.status, 'rejected');
      assert.ok(outcome.status === 'rejected' && outcome.reason instanceof UnavailableError, String(outcome.status === 'rejected' && outcome.reason));
    }
    const later = await settlesWithin(sql`SELECT 1`.execute(db.db).catch((e: unknown) => e), 5_000, 'a later query');
    assert.ok(later instanceof UnavailableError);
    const lost = await settlesWithin(db.lost, 5_000, 'lost');
    assert.match(lost.message, /exited/);
    assert.equal(await db.ping(), false);
  });

  it('close lets the holder of the session finish its transaction, then closes PGlite: what it committed is on disk', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-embedded-'));
    try {
      const open = () => openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, timeoutMs: 60_000 });
      const db = await open();
      let lostToo = false;
      void db.lost.then(() => (lostToo = true));
      await sql`CREATE TABLE drained (n int)`.execute(db.db);
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      const slow = db.db.transaction().execute(async (tx) => {
        holding();
        await sql`SELECT pg_sleep(1)`.execute(tx);
        await sql`INSERT INTO drained VALUES (1)`.execute(tx);
      });
      await held;
      await Promise.all([slow, db.close()]);
      await assert.rejects(sql`SELECT 1`.execute(db.db));
      assert.equal(lostToo, false, 'a close is not a loss');

      const again = await open();
      try {
        const { rows } = await sql<{ n: number }>`SELECT n FROM drained ORDER BY n`.execute(again.db);
        assert.deepEqual(rows, [{ n: 1 }]);
      } finally {
        await again.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
