import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGlitePool } from './pglite-pool.js';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

/** An open database: Kysely over PostgreSQL or the embedded PGlite. */
export interface Db {
  readonly kind: 'postgres' | 'pglite';
  readonly db: Kysely<Database>;
  /** PostgreSQL only: the pool, for LISTEN connections. */
  readonly pool: pg.Pool | null;
  /** PGlite only: a dump of the data folder. */
  dumpDataDir(): Promise<Blob>;
  /** True when the database answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DbOptions {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly poolSize: number;
  /** In-memory PGlite only: start from this dump of a data folder (tests clone a migrated template). */
  readonly pgliteDump?: Blob;
}

/** Opens the database the settings name and brings its schema up to date. */
export async function openDatabase(options: DbOptions): Promise<Db> {
  const handle = options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize) : await openPGlite(options);
  try {
    await migrateToLatest(handle.db as Kysely<unknown>);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

function openPostgres(url: string, poolSize: number): Db {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client that loses its server must not take the process down.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    pool,
    dumpDataDir: () => Promise.reject(new Error('only the embedded database can be dumped')),
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

/** DATA_DIR value that keeps the embedded database in memory only (tests, throwaway runs). */
export const inMemoryDataDir = 'memory://';

async function openPGlite(options: DbOptions): Promise<Db> {
  let pglite: PGlite;
  if (options.dataDir === inMemoryDataDir) {
    pglite = await PGlite.create(options.pgliteDump ? { loadDataDir: options.pgliteDump } : {});
  } else {
    const dir = path.resolve(options.dataDir, 'pglite');
    fs.mkdirSync(dir, { recursive: true });
    pglite = await PGlite.create(dir);
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new PGlitePool(pglite) }) });
  return {
    kind: 'pglite',
    db,
    pool: null,
    dumpDataDir: async () => pglite.dumpDataDir('none'),
    ping: () => ping(db),
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

/** A dump of a migrated, empty in-memory database, to start others from quickly. */
export async function migratedPGliteDump(): Promise<Blob> {
  const handle = await openDatabase({ databaseUrl: undefined, dataDir: inMemoryDataDir, poolSize: 1 });
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
