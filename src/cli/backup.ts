import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimAdminSocket, sendAdminCommand } from '../admin/socket.js';
import type { Config } from '../config.js';
import { BackupError, exportDatabase, readBackupFile, restoreDatabase, writeBackupFile, type BackupContent, type Copied } from '../store/backup.js';
import { inMemoryDataDir, openDatabase, type Db } from '../store/database.js';
import { migrateTo, migrateToLatest } from '../store/migrations.js';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

/** A backup, restore or move may take long on a big database: its statements are not cut at DATABASE_TIMEOUT_MS. */
const longTimeoutMs = 6 * 60 * 60 * 1000;

export type DataCommand =
  | { readonly kind: 'backup'; readonly file: string; readonly json: boolean }
  | { readonly kind: 'restore'; readonly file: string; readonly json: boolean }
  | { readonly kind: 'move-to-postgres'; readonly url: string; readonly json: boolean };

interface Output {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Runs backup, restore or move-to-postgres; the exit code. */
export async function runDataCommand(config: Config, command: DataCommand, io: Output): Promise<number> {
  const started = performance.now();
  try {
    const report = await run(config, command);
    const seconds = (performance.now() - started) / 1000;
    const rows = Object.values(report.rows).reduce((a, b) => a + b, 0);
    if (command.json) {
      io.out(`${JSON.stringify({ ...report, seconds: Number(seconds.toFixed(3)) })}\n`);
    } else {
      const size = report.bytes === undefined ? '' : ` (${(report.bytes / 1024 / 1024).toFixed(1)} MiB)`;
      io.out(`${report.done}: ${rows} rows of ${Object.keys(report.rows).length} tables${size} in ${seconds.toFixed(1)} s\n`);
      for (const [table, n] of Object.entries(report.rows)) io.out(`  ${table.padEnd(28)} ${n}\n`);
    }
    return 0;
  } catch (err) {
    if (!(err instanceof BackupError)) throw err;
    io.err(command.json ? `${JSON.stringify({ error: err.message })}\n` : `error: ${err.message}\n`);
    return 1;
  }
}

async function run(config: Config, command: DataCommand): Promise<Copied & { readonly done: string; readonly bytes?: number }> {
  switch (command.kind) {
    case 'backup': {
      const written = await fromSource(config, (content) => writeBackupFile(content, command.file));
      return { done: `backed up to ${command.file}`, ...written };
    }
    case 'restore': {
      const content = await readBackupFile(command.file);
      const copied = await intoTarget(config.DATABASE_URL, config, (db) => restoreDatabase(db.db, content, schemaOf(db.db)));
      return { done: `restored from ${command.file}`, ...copied };
    }
    case 'move-to-postgres': {
      if (config.DATABASE_URL) throw new BackupError('move-to-postgres copies the embedded database: unset DATABASE_URL and give the target as the argument');
      const copied = await fromSource(config, (content) => intoTarget(command.url, config, (db) => restoreDatabase(db.db, content, schemaOf(db.db))));
      return { done: `copied to PostgreSQL ${describeUrl(command.url)}; set DATABASE_URL to it and start the service`, ...copied };
    }
  }
}

function schemaOf(db: Kysely<Database>) {
  const k = db as unknown as Kysely<unknown>;
  return { migrateTo: (name: string | null) => migrateTo(k, name), migrateToLatest: () => migrateToLatest(k) };
}

/** The database as the operator would name it, never with its password. */
function describeUrl(url: string): string {
  const u = new URL(url);
  return `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
}

/**
 * Reads the configured database in one snapshot. On PostgreSQL straight, beside a running service. The embedded
 * database admits one process: while the server runs, it writes a copy of its data folder (taken between two
 * queries, as a crash would leave it, which PostgreSQL's own recovery makes whole) and the copy is read here, in
 * memory, so the server's one connection is held only for the copy.
 */
async function fromSource<T>(config: Config, read: (content: BackupContent) => Promise<T>): Promise<T> {
  if (config.DATABASE_URL) return withDb({ databaseUrl: config.DATABASE_URL }, (db) => exportDatabase(db.db, read));
  if (config.DATA_DIR === inMemoryDataDir) throw new BackupError('DATA_DIR is memory://: an in-memory database ends with its process, there is nothing to copy');
  const snapshot = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'otp-snapshot-')), 'data.tar');
  try {
    const answer = (await sendAdminCommand(config.adminSocketPath, { name: 'database.snapshot', path: snapshot })) as
      | { ok: true }
      | { ok: false; error: string }
      | null;
    if (answer && !answer.ok) throw new BackupError(`the running server could not copy its database: ${answer.error}`);
    if (answer) {
      const dump = new Blob([fs.readFileSync(snapshot)]);
      return await withDb({ dataDir: inMemoryDataDir, pgliteDump: dump }, (db) => exportDatabase(db.db, read));
    }
    return await holdingDataDir(config, 'a backup', () => withDb({ dataDir: config.DATA_DIR }, (db) => exportDatabase(db.db, read)));
  } finally {
    fs.rmSync(path.dirname(snapshot), { recursive: true, force: true });
  }
}

/** Opens the database a restore writes into, as it is: the restore brings its schema to the backup's. */
async function intoTarget<T>(url: string | undefined, config: Config, write: (db: Db) => Promise<T>): Promise<T> {
  if (url) {
    try {
      new URL(url);
    } catch {
      throw new BackupError('the target must be a PostgreSQL URL (postgres://user:password@host:5432/database)');
    }
    return withDb({ databaseUrl: url }, write);
  }
  if (config.DATA_DIR === inMemoryDataDir) throw new BackupError('DATA_DIR is memory://: restore into a folder (DATA_DIR) or PostgreSQL (DATABASE_URL)');
  return holdingDataDir(config, 'a restore', () => withDb({ dataDir: config.DATA_DIR }, write));
}

/**
 * Holds the embedded database's admin socket while this process has the database open, as a server does: a
 * server started meanwhile refuses to start instead of opening the database beside this one.
 */
async function holdingDataDir<T>(config: Config, what: string, use: () => Promise<T>): Promise<T> {
  let socket;
  try {
    socket = await claimAdminSocket(config.adminSocketPath);
  } catch (err) {
    throw new BackupError(`${(err as Error).message}: stop the server first${what === 'a restore' ? ', and restore into a new DATA_DIR' : ''}`);
  }
  socket.serve(async () => ({ ok: false, error: `${what} has the database open; try again when it is done` }));
  try {
    return await use();
  } finally {
    await socket.close();
  }
}

async function withDb<T>(where: { databaseUrl?: string; dataDir?: string; pgliteDump?: Blob }, use: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDatabase({
    databaseUrl: where.databaseUrl,
    dataDir: where.dataDir ?? inMemoryDataDir,
    poolSize: 2,
    timeoutMs: longTimeoutMs,
    migrate: false,
    ...(where.pgliteDump && { pgliteDump: where.pgliteDump }),
  });
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}
