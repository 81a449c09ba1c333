import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { BoundedPgPool, retryAfterFor } from './bounded-pool.js';
import { parseDatabaseUrl } from './database-url.js';
import { PrimaryPool } from './primary-pool.js';
import { PGlitePool } from './pglite-pool.js';
import { PGliteThread } from './pglite-thread.js';
import { privateFolder, restrictTree } from './private-folder.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

/** An open database: Kysely over PostgreSQL or the embedded PGlite. */
export interface Db {
  readonly kind: 'postgres' | 'pglite';
  readonly db: Kysely<Database>;
  /** PostgreSQL only: the pool, for LISTEN connections. */
  readonly pool: pg.Pool | null;
  /** PGlite only: the worker thread that owns it. */
  readonly thread: PGliteThread | null;
  /** PGlite only: a dump of the data folder. */
  dumpDataDir(): Promise<Blob>;
  /**
   * Settles if the database is gone for good: the embedded database's thread died (its requests fail with an
   * UnavailableError, and so would every later one), and the process should stop so its supervisor starts it
   * again. Never settles on PostgreSQL, where a lost server is found again by reconnecting.
   */
  readonly lost: Promise<Error>;
  /** True when the database answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DbOptions {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly poolSize: number;
  /** DATABASE_PREPARED_STATEMENTS: the create's statements prepared once per connection (PostgreSQL). Default true. */
  readonly preparedStatements?: boolean;
  /** DATABASE_TIMEOUT_MS: the longest a query or transaction may take, the wait for a connection included. */
  readonly timeoutMs: number;
  /** In-memory PGlite only: start from this dump of a data folder (tests clone a migrated template). */
  readonly pgliteDump?: Blob;
  /** False: leave the schema as it is (a restore brings it to the backup's own first). Default true. */
  readonly migrate?: boolean;
}

/** Opens the database the settings name and brings its schema up to date. */
export async function openDatabase(options: DbOptions): Promise<Db> {
  const migrate = options.migrate ?? true;
  if (options.databaseUrl && migrate) await migratePostgres(options.databaseUrl, options.timeoutMs);
  const handle = options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize, options.timeoutMs, options.preparedStatements ?? true) : await openPGlite(options);
  try {
    if (!options.databaseUrl && migrate) await migrateToLatest(handle.db as Kysely<unknown>);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

/**
 * Migrations run on a connection of their own, without the statement and lock time-outs: a long migration
 * (an index on a big table), or one waiting for another instance's migrations, is not cut short. Reaching
 * the server is bounded all the same.
 */
async function migratePostgres(url: string, timeoutMs: number): Promise<void> {
  const pool = postgresPool(url, { max: 1, connectionTimeoutMillis: timeoutMs }, timeoutMs);
  pool.on('error', () => undefined);
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Sets each new session of `pool` as the service runs its own (the bench's database limits use it too): no JIT
 * compiling, queued before the session's first query, whatever the URL says. JIT pays off for long analytic
 * scans, and this service sends short statements: on a large table a create group's read was costed above
 * jit_above_cost and compiled every time, 25 ms for 0.3 ms of work, and creates ran at a fifth of their speed.
 */
export function setServiceSessions(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    client.query('SET jit = off').catch(() => undefined);
  });
}

/**
 * A pool of connections to the URL's server; when the URL names several hosts (or target_session_attrs=read-write),
 * to whichever of them is the writable primary, found again after a failover (primary-pool.ts).
 */
export function postgresPool(url: string, options: Omit<pg.PoolConfig, 'connectionString'>, timeoutMs: number): pg.Pool {
  const target = parseDatabaseUrl(url);
  return target.readWrite ? new PrimaryPool(target, options, timeoutMs) : new pg.Pool({ connectionString: url, ...options });
}

function openPostgres(url: string, poolSize: number, timeoutMs: number, prepared: boolean): Db {
  const pool = postgresPool(url, {
    max: poolSize,
    // Waiting for a connection, new or free, is bounded.
    connectionTimeoutMillis: timeoutMs,
    // Set in each session at connect: the server itself ends what overruns, and rolls back an abandoned transaction.
    statement_timeout: timeoutMs,
    lock_timeout: timeoutMs,
    idle_in_transaction_session_timeout: timeoutMs,
    // A server that does not answer at all cannot fire its own timers: the client gives up too.
    query_timeout: timeoutMs,
  }, timeoutMs);
  // An idle client that loses its server must not take the process down.
  pool.on('error', () => undefined);
  setServiceSessions(pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new BoundedPgPool(pool, timeoutMs, pool instanceof PrimaryPool ? (client, err) => pool.serverFailed(client, err) : undefined, prepared) }) });
  return {
    kind: 'postgres',
    db,
    pool,
    thread: null,
    dumpDataDir: () => Promise.reject(new Error('only the embedded database can be dumped')),
    lost: new Promise<Error>(() => undefined),
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

/** DATA_DIR value that keeps the embedded database in memory only (tests, throwaway runs). */
export const inMemoryDataDir = 'memory://';

async function openPGlite(options: DbOptions): Promise<Db> {
  let dataDir: string | null = null;
  if (options.dataDir !== inMemoryDataDir) {
    // Refused before anything is read or written if others can open it; made 0700 if new.
    privateFolder(path.resolve(options.dataDir));
    dataDir = path.resolve(options.dataDir, 'pglite');
    privateFolder(dataDir);
    // What PGlite wrote last time is 0666: behind the folder's 0700, but kept at 0600 all the same.
    restrictTree(dataDir);
  }
  const thread = await PGliteThread.start({
    dataDir,
    ...(dataDir === null && options.pgliteDump && { loadDataDir: options.pgliteDump }),
    retryAfterSeconds: retryAfterFor(options.timeoutMs),
  });
  const folder = dataDir;
  return embeddedDb(thread, options.timeoutMs, async () => {
    await thread.close();
    if (folder !== null) restrictTree(folder);
  });
}

/**
 * The embedded database in `thread` as a Db; `release` is what closing it does to the thread once Kysely has let
 * go of it (the service closes PGlite; tests may hand the thread to their next services instead).
 */
export function embeddedDb(thread: PGliteThread, timeoutMs: number, release: () => Promise<void>): Db {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new PGlitePool(thread, timeoutMs) }) });
  return {
    kind: 'pglite',
    db,
    pool: null,
    thread,
    dumpDataDir: () => thread.dump(),
    lost: thread.lost,
    ping: () => ping(db),
    // Kysely's end waits for the holder of the session and those queued for it; then PGlite closes in its thread.
    close: async () => {
      await db.destroy();
      await release();
    },
  };
}

/** A dump of a migrated, empty in-memory database, to start others from quickly. */
export async function migratedPGliteDump(): Promise<Blob> {
  const handle = await openDatabase({ databaseUrl: undefined, dataDir: inMemoryDataDir, poolSize: 1, timeoutMs: 60_000 });
  try {
    return await handle.dumpDataDir();
  } finally {
    await handle.close();
  }
}

async function ping(db: Kysely<Database>): Promise<boolean> {
  try {
    await sql`SELECT 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
