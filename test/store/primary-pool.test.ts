import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { freePort } from '../../scripts/temp-postgres.js';
import { UnavailableError } from '../../src/domain/unavailable.js';
import { openDatabase, postgresPool, type Db } from '../../src/store/database.js';
import { describeDatabaseUrl, parseDatabaseUrl } from '../../src/store/database-url.js';
import { freshDatabase, postgresSkip, type TestDatabase } from '../support/databases.js';

describe('DATABASE_URL with several hosts, as libpq reads it', () => {
  it('reads each host and port, the shared settings, and asks for the writable server', () => {
    const t = parseDatabaseUrl('postgres://otp:s%40cret@db1:5433,db2,[::1]:6000/otp?target_session_attrs=read-write&application_name=otp&connect_timeout=3');
    assert.deepEqual(t.hosts, [
      { host: 'db1', port: 5433 },
      // libpq: a host without its own port takes the next one given.
      { host: 'db2', port: 6000 },
      { host: '::1', port: 6000 },
    ]);
    assert.equal(t.readWrite, true);
    assert.equal(t.connectTimeoutMs, 3000);
    assert.equal(t.config.user, 'otp');
    assert.equal(t.config.password, 's@cret');
    assert.equal(t.config.database, 'otp');
    assert.equal(t.config.application_name, 'otp');
    assert.equal((t.config as Record<string, unknown>).target_session_attrs, undefined);
    assert.equal(describeDatabaseUrl('postgres://otp:s%40cret@db1:5433,db2:5432/otp'), 'otp@db1:5433,db2:5432/otp');
  });

  it('keeps a single host as before, unless read-write is asked for', () => {
    assert.equal(parseDatabaseUrl('postgres://u@h/db').readWrite, false);
    assert.equal(parseDatabaseUrl('postgres://u@h/db?target_session_attrs=primary').readWrite, true);
    assert.deepEqual(parseDatabaseUrl('postgres://u@h/db').hosts, [{ host: 'h', port: 5432 }]);
    assert.deepEqual(parseDatabaseUrl('postgres://u@h,k/db').hosts, [
      { host: 'h', port: 5432 },
      { host: 'k', port: 5432 },
    ]);
  });

  it('refuses what the service cannot use', () => {
    assert.throws(() => parseDatabaseUrl('postgres://u@h1,h2/db?target_session_attrs=standby'), /only read-write/);
    assert.throws(() => parseDatabaseUrl('postgres://u@h1,,h2/db'), /host\[:port\]/);
    assert.throws(() => parseDatabaseUrl('postgres://u@h1:99999/db'), /port/);
  });
});

/**
 * The pool against the test server: a host that refuses comes first, and the pool goes on to the next; a server
 * that is read-only for the connecting role (default_transaction_read_only, as a standby would be) is never
 * used, and with no writable host the service answers UnavailableError within DATABASE_TIMEOUT_MS, not a hang.
 * The failover itself, between a real primary and standby, is test/store/auto-failover.test.ts.
 */
describe('the pool connects only to a writable server (PostgreSQL)', { skip: postgresSkip }, () => {
  let database: TestDatabase;
  let refusing: string;
  const handles: Db[] = [];
  const role = `ro_${randomBytes(4).toString('hex')}`;

  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  const hostsUrl = (user: string) => {
    const url = new URL(database.env.DATABASE_URL as string);
    return `postgres://${user}@${refusing},${url.host}${url.pathname}?target_session_attrs=read-write`;
  };

  before(async () => {
    database = await freshDatabase('postgres');
    // A port nothing listens on: connections to it are refused.
    refusing = `127.0.0.1:${await freePort()}`;
    await admin(`CREATE ROLE ${role} LOGIN SUPERUSER`);
    await admin(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
  });
  after(async () => {
    for (const h of handles) await h.close();
    await database.drop();
    await admin(`DROP ROLE IF EXISTS ${role}`);
  });

  it('passes over a host that refuses and works on the next', async () => {
    const db = await openDatabase({ databaseUrl: hostsUrl('postgres'), dataDir: 'unused', poolSize: 3, timeoutMs: 5_000 });
    handles.push(db);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM clients`.execute(db.db);
    assert.equal(rows[0]?.n, 0);
    assert.equal(await db.ping(), true);
  });

  it('answers a write refused as read-only (25006, a primary just demoted) as unavailable, not as a failure', async () => {
    // One host, no target_session_attrs: the pool takes the server as it is, as before; the write then fails.
    const url = new URL(database.env.DATABASE_URL as string);
    const db = await openDatabase({ databaseUrl: `postgres://${role}@${url.host}${url.pathname}`, dataDir: 'unused', poolSize: 2, timeoutMs: 2_000 });
    handles.push(db);
    await assert.rejects(
      sql`CREATE TABLE read_only_probe (x int)`.execute(db.db),
      (err: unknown) => err instanceof UnavailableError && (err.cause as { code?: string }).code === '25006',
    );
  });

  it('never uses a read-only server, and says so as unavailable within the time-out', async () => {
    // The same server, reached as a role whose sessions are read-only: what a standby looks like to the pool.
    const url = hostsUrl(role);
    const readOnly = postgresPool(url, { max: 2, connectionTimeoutMillis: 1_500 }, 1_500);
    readOnly.on('error', () => undefined);
    try {
      const started = Date.now();
      await assert.rejects(readOnly.connect(), (err: unknown) => err instanceof UnavailableError && /no writable database server/.test(err.message));
      assert.ok(Date.now() - started < 10_000, 'bounded, not a hang');
    } finally {
      await readOnly.end();
    }
  });
});
