import { randomBytes } from 'node:crypto';
import pg from 'pg';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { retryAfterFor } from '../../src/store/bounded-pool.js';
import { embeddedDb, inMemoryDataDir, migratedPGliteDump, openDatabase, type Db } from '../../src/store/database.js';
import { PGliteThread } from '../../src/store/pglite-thread.js';
import { restrictTree } from '../../src/store/private-folder.js';

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
  // A copy of the test runner's migrated database is made in milliseconds, where migrating a new one takes a
  // second; a file run on its own (no runner) migrates its own.
  const template = process.env.TEST_DATABASE_TEMPLATE;
  await onServer(adminUrl, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  return {
    kind,
    env: { DATABASE_URL: databaseUrl(adminUrl, name) },
    drop: () => onServer(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** Runs one statement (CREATE DATABASE, DROP DATABASE) on the server of `adminUrl`, in a connection of its own. */
export async function onServer(adminUrl: string, statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

/** The URL of database `name` on the server of `adminUrl`, with the same user and password. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A new DATA_DIR holding a migrated, empty embedded database, for a server or CLI process to open: a copy of the test
 * runner's (PGLITE_TEMPLATE_DIR), made in a fraction of a second where a first start makes one in several. A file
 * run without the runner gets an empty folder, and its first process makes the database there, as a first start
 * does. A test of the first start itself uses an empty folder.
 */
export function embeddedDataDir(prefix: string): string {
  return withEmbeddedDatabase(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** `dir`, made if missing, with the runner's migrated embedded database copied in; returns `dir`. */
export function withEmbeddedDatabase(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const template = process.env.PGLITE_TEMPLATE_DIR;
  if (template) fs.cpSync(template, dir, { recursive: true });
  // The service refuses a data folder others can open; cpSync makes the folders it copies by the umask.
  restrictTree(dir);
  return dir;
}

/** An in-memory embedded database, migrated, opened the production way: PGlite in its worker thread. */
export async function openEmbedded(timeoutMs = 60_000): Promise<Db> {
  return openDatabase({ databaseUrl: undefined, dataDir: inMemoryDataDir, poolSize: 1, timeoutMs, pgliteDump: await pgliteTemplate() });
}

/** This process's idle in-memory embedded databases, migrated and empty, by the Retry-After their thread answers with. */
const idleEmbedded = new Map<number, PGliteThread[]>();

/**
 * An in-memory embedded database for a harness's services, migrated and empty: one a closed harness gave back,
 * emptied, or else a new one loaded from the template. Loading PGlite costs about two seconds of processor;
 * emptying its tables, milliseconds. A database that cannot be emptied promptly (a statement still running in it)
 * is ended rather than given out again.
 */
export async function reusableEmbedded(timeoutMs: number): Promise<Db> {
  const retryAfterSeconds = retryAfterFor(timeoutMs);
  let idle = idleEmbedded.get(retryAfterSeconds);
  if (!idle) idleEmbedded.set(retryAfterSeconds, (idle = []));
  const thread = idle.pop() ?? (await PGliteThread.start({ dataDir: null, loadDataDir: await pgliteTemplate(), retryAfterSeconds }));
  let released = false;
  return embeddedDb(thread, timeoutMs, async () => {
    if (released) return;
    released = true;
    if (await emptied(thread)) idle.push(thread);
    else await thread.kill();
  });
}

const truncateAll = `DO $$ BEGIN EXECUTE (
  SELECT 'TRUNCATE ' || string_agg(format('%I', tablename), ', ') || ' RESTART IDENTITY'
  FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'kysely_migration%'
); END $$`;

/**
 * Every table but the migrations' emptied and its sequences restarted, and the session as new (no transaction,
 * settings, locks or prepared statements left by the last user), within five seconds; false if that failed.
 */
async function emptied(thread: PGliteThread): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 5_000)));
  const work = thread
    .query([
      { sql: 'ROLLBACK', params: [] },
      { sql: 'DISCARD ALL', params: [] },
      { sql: truncateAll, params: [] },
    ])
    .then(
      () => true,
      () => false,
    );
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
