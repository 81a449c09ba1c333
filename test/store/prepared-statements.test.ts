import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { BoundedPgPool, preparedMark } from '../../src/store/bounded-pool.js';
import { freshDatabase, postgresSkip, type TestDatabase } from '../support/databases.js';

describe('statements every create sends [postgres]', { skip: postgresSkip }, () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let bounded: BoundedPgPool;
  before(async () => {
    database = await freshDatabase('postgres');
    pool = new pg.Pool({ connectionString: database.env.DATABASE_URL, max: 1 });
    bounded = new BoundedPgPool(pool, 5_000);
  });
  after(async () => {
    await pool.end();
    await database.drop();
  });

  const statements = async () => {
    const client = await bounded.connect();
    try {
      const { rows } = await client.query<{ name: string; statement: string; plans: number }>(
        `SELECT name, statement, (generic_plans + custom_plans)::int AS plans FROM pg_prepared_statements WHERE name LIKE 'otp_%'`,
        [],
      );
      return rows;
    } finally {
      client.release();
    }
  };

  it('are prepared once per connection, by name, and the others never', async () => {
    const marked = `${preparedMark}\nSELECT k FROM unnest($1::text[]) AS k ORDER BY k`;
    for (const keys of [['a', 'b'], ['c'], ['d', 'e', 'f']]) {
      const client = await bounded.connect();
      try {
        const { rows } = await client.query<{ k: string }>(marked, [keys]);
        assert.deepEqual(rows.map((r) => r.k), keys);
        await client.query('SELECT $1::int AS n', [1]);
      } finally {
        client.release();
      }
    }
    const prepared = await statements();
    assert.equal(prepared.length, 1, JSON.stringify(prepared));
    assert.match(prepared[0]?.statement ?? '', /unnest/);
    // Planned as PostgreSQL keeps a prepared statement's plans, three executions of one statement.
    assert.equal(prepared[0]?.plans, 3);
  });

  it('are sent as any other with DATABASE_PREPARED_STATEMENTS=false (a pooler that keeps no session)', async () => {
    const unprepared = new pg.Pool({ connectionString: database.env.DATABASE_URL, max: 1 });
    try {
      const off = new BoundedPgPool(unprepared, 5_000, undefined, false);
      const client = await off.connect();
      try {
        const marked = `${preparedMark}\nSELECT count(*)::int AS n FROM unnest($1::text[])`;
        assert.deepEqual((await client.query<{ n: number }>(marked, [['x', 'y']])).rows, [{ n: 2 }]);
        const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'otp_%'`, []);
        assert.deepEqual(rows, [{ n: 0 }]);
      } finally {
        client.release();
      }
    } finally {
      await unprepared.end();
    }
  });
});
