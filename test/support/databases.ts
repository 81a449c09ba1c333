import { randomBytes } from 'node:crypto';
import pg from 'pg';
import fs from 'node:fs';
import { inMemoryDataDir, migratedPGliteDump, openDatabase, type Db } from '../../src/store/database.js';

export type DbKind = 'pglite' | 'postgres';

/** Settings naming a fresh, empty database of the kind asked for. */
export interface TestDatabase {
  readonly kind: DbKind;
  readonly env: Record<string, string>;
  drop(): Promise<void>;
}

/** The kinds to run storage tests on; postgres only when the test runner provided a server. */
export const dbKinds: readonly DbKind[] = ['pglite', 'postgres'];

export const postgresSkip: string | false = process.env.TEST_DATABASE_URL
  ? false
  : 'no PostgreSQL: TEST_DATABASE_URL unset and no initdb found';

let template: Promise<Blob> | null = null;

/**
 * A migrated, empty PGlite data folder to clone: creating PGlite from scratch takes seconds, loading a dump
 * a fraction of one. The test runner makes it once per run (PGLITE_TEMPLATE); a file run alone makes its own.
 */
export function pgliteTemplate(): Promise<Blob> {
  template ??= (async () => {
    const file = process.env.PGLITE_TEMPLATE;
    if (file && fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);
    return migratedPGliteDump();
  })();
  return template;
}

export async function freshDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind === 'pglite') return { kind, env: { DATA_DIR: inMemoryDataDir }, drop: async () => undefined };
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    kind,
    env: { DATABASE_URL: url.toString() },
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** An in-memory embedded database, migrated, opened the production way: PGlite in its worker thread. */
export async function openEmbedded(timeoutMs = 60_000): Promise<Db> {
  return openDatabase({ databaseUrl: undefined, dataDir: inMemoryDataDir, poolSize: 1, timeoutMs, pgliteDump: await pgliteTemplate() });
}
