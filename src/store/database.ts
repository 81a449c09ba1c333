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
  /** True when the database answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DbOptions {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly poolSize: number;
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
    ping: () => ping(db),
    close: () => db.destroy(),
  };
}

async function openPGlite(options: DbOptions): Promise<Db> {
  const dir = path.resolve(options.dataDir, 'pglite');
  fs.mkdirSync(dir, { recursive: true });
  const pglite = await PGlite.create(dir);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new PGlitePool(pglite) }) });
  return {
    kind: 'pglite',
    db,
    pool: null,
    ping: () => ping(db),
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

async function ping(db: Kysely<Database>): Promise<boolean> {
  try {
    await sql`SELECT 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
