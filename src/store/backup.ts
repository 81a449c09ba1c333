import fs from 'node:fs';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { sql, type Kysely, type Transaction } from 'kysely';
import { appliedMigrations, knownMigrations } from './migrations.js';
import type { Database } from './schema.js';

/**
 * A logical copy of the whole database, the same on PGlite and PostgreSQL: every table's rows as PostgreSQL's
 * own JSON of them (`to_jsonb`), read in one snapshot and written back with `jsonb_populate_recordset`, so each
 * value comes back as the server had it, whatever its type. It names the migrations its rows were made under, and
 * is restored under exactly those before the newer ones run over it, as they would have over the original.
 *
 * The file is gzip'd lines: a `#backup` header, then for each table a `#table` line followed by one JSON row a
 * line, then `#end` with the row counts, so a cut-short file is told from a whole one.
 */
export const backupFormat = 'otp-service-backup';
const formatVersion = 1;
/** Rows read per FETCH and written per INSERT: large enough to amortise a round trip, small enough to stream. */
const batchRows = 2_000;

export interface BackupHeader {
  readonly format: typeof backupFormat;
  readonly version: number;
  readonly createdAt: string;
  /** The migrations the rows were made under, oldest first. */
  readonly migrations: readonly string[];
}

export interface TableRows {
  readonly table: string;
  /** The columns written (generated ones are left out: the database computes them again). */
  readonly columns: readonly string[];
  /** Batches of rows, each row PostgreSQL's JSON text of it. */
  readonly batches: AsyncIterable<readonly string[]>;
}

export interface BackupContent {
  readonly header: BackupHeader;
  readonly tables: AsyncIterable<TableRows>;
}

/** Tables that are the migrator's own, never copied: the target's migrator writes them. */
const migratorTables = new Set(['kysely_migration', 'kysely_migration_lock']);

interface TableInfo {
  readonly name: string;
  readonly columns: readonly string[];
  readonly identity: readonly string[];
}

/** The data tables with their columns, each after every table its foreign keys name, so rows load in order. */
async function dataTables(db: Kysely<Database> | Transaction<Database>): Promise<TableInfo[]> {
  const { rows: columns } = await sql<{ table: string; column: string; identity: boolean }>`
    SELECT c.relname AS table, a.attname AS column, a.attidentity <> '' AS identity
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
    WHERE n.nspname = current_schema() AND c.relkind = 'r'
    ORDER BY c.relname, a.attnum`.execute(db);
  const { rows: references } = await sql<{ table: string; references: string }>`
    SELECT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS references
    FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`.execute(db);
  const tables = new Map<string, { columns: string[]; identity: string[] }>();
  for (const c of columns) {
    if (migratorTables.has(c.table)) continue;
    const t = tables.get(c.table) ?? { columns: [], identity: [] };
    t.columns.push(c.column);
    if (c.identity) t.identity.push(c.column);
    tables.set(c.table, t);
  }
  const ordered: TableInfo[] = [];
  const placed = new Set<string>();
  const place = (name: string, path: readonly string[]): void => {
    if (placed.has(name) || path.includes(name)) return;
    for (const r of references) if (r.table === name && r.references !== name) place(r.references, [...path, name]);
    const t = tables.get(name);
    if (!t) return;
    placed.add(name);
    ordered.push({ name, ...t });
  };
  for (const name of [...tables.keys()].sort()) place(name, []);
  return ordered;
}

const quoted = (name: string) => sql.id(name);

/**
 * Reads the whole database in one snapshot and hands it to `write` while the snapshot is open. On PostgreSQL a
 * REPEATABLE READ, READ ONLY transaction: creates go on beside it, and nothing it reads moves under it.
 */
export async function exportDatabase<T>(db: Kysely<Database>, write: (content: BackupContent) => Promise<T>): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const migrations = await appliedMigrations(trx);
      const tables = await dataTables(trx);
      const header: BackupHeader = { format: backupFormat, version: formatVersion, createdAt: new Date().toISOString(), migrations };
      async function* rowsOf(table: TableInfo): AsyncIterable<readonly string[]> {
        const cursor = `backup_${table.name}`;
        await sql`DECLARE ${sql.id(cursor)} NO SCROLL CURSOR FOR SELECT to_jsonb(t)::text AS row FROM ${quoted(table.name)} t`.execute(trx);
        for (;;) {
          const { rows } = await sql<{ row: string }>`FETCH ${sql.raw(String(batchRows))} FROM ${sql.id(cursor)}`.execute(trx);
          if (rows.length === 0) break;
          yield rows.map((r) => r.row);
        }
        await sql`CLOSE ${sql.id(cursor)}`.execute(trx);
      }
      async function* all(): AsyncIterable<TableRows> {
        for (const t of tables) yield { table: t.name, columns: t.columns, batches: rowsOf(t) };
      }
      return write({ header, tables: all() });
    });
}

export interface Copied {
  /** Rows per table. */
  readonly rows: Readonly<Record<string, number>>;
}

/**
 * Writes a backup to `file`, readable by its owner only (it holds secrets' hashes, webhook secrets and token
 * signing keys). It is written beside the name and renamed into place once whole: a backup that failed never
 * looks like one that worked. An existing file is never overwritten.
 */
export async function writeBackupFile(content: BackupContent, file: string): Promise<Copied & { readonly bytes: number }> {
  if (fs.existsSync(file)) throw new BackupError(`${file} exists: choose a new name for the backup`);
  const partial = `${file}.partial`;
  const counts: Record<string, number> = {};
  async function* lines(): AsyncIterable<string> {
    yield `#backup ${JSON.stringify(content.header)}\n`;
    for await (const t of content.tables) {
      yield `#table ${JSON.stringify({ table: t.table, columns: t.columns })}\n`;
      let n = 0;
      for await (const batch of t.batches) {
        n += batch.length;
        yield `${batch.join('\n')}\n`;
      }
      counts[t.table] = n;
    }
    yield `#end ${JSON.stringify({ rows: counts })}\n`;
  }
  try {
    await pipeline(lines, createGzip(), fs.createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
    fs.renameSync(partial, file);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  }
  return { rows: counts, bytes: fs.statSync(file).size };
}

/** A backup that cannot be used as it is: the message says why, for the operator. */
export class BackupError extends Error {}

/** Reads a backup file as it was written, checking that it is one, and whole. */
export async function readBackupFile(file: string): Promise<BackupContent> {
  if (!fs.existsSync(file)) throw new BackupError(`no file ${file}`);
  const input = fs.createReadStream(file).pipe(createGunzip());
  const lines = readline.createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]();
  const next = async (): Promise<string | null> => {
    try {
      const r = await lines.next();
      return r.done ? null : r.value;
    } catch (err) {
      throw new BackupError(`${file} is not a whole backup (${(err as Error).message})`);
    }
  };
  const first = await next();
  const header = first?.startsWith('#backup ') ? (JSON.parse(first.slice(8)) as BackupHeader) : null;
  if (!header || header.format !== backupFormat) throw new BackupError(`${file} is not an otp-service backup`);
  if (header.version !== formatVersion) throw new BackupError(`${file} is a backup of format ${header.version}; this otp-service reads ${formatVersion}`);
  let pending = await next();
  async function* batchesUntilNextMark(): AsyncIterable<readonly string[]> {
    let batch: string[] = [];
    while (pending !== null && !pending.startsWith('#')) {
      batch.push(pending);
      if (batch.length === batchRows) {
        yield batch;
        batch = [];
      }
      pending = await next();
    }
    if (batch.length > 0) yield batch;
  }
  async function* tables(): AsyncIterable<TableRows> {
    const counts: Record<string, number> = {};
    while (pending?.startsWith('#table ')) {
      const { table, columns } = JSON.parse(pending.slice(7)) as { table: string; columns: string[] };
      pending = await next();
      let n = 0;
      const counted = async function* () {
        for await (const b of batchesUntilNextMark()) {
          n += b.length;
          yield b;
        }
      };
      yield { table, columns, batches: counted() };
      // A reader that skipped the rows still moves past them.
      for await (const b of batchesUntilNextMark()) n += b.length;
      counts[table] = n;
    }
    if (!pending?.startsWith('#end ')) throw new BackupError(`${file} is cut short: it has no end mark, so some rows may be missing`);
    const { rows } = JSON.parse(pending.slice(5)) as { rows: Record<string, number> };
    for (const [table, n] of Object.entries(rows)) {
      if (counts[table] !== n) throw new BackupError(`${file} is damaged: ${table} should have ${n} rows, it has ${counts[table] ?? 0}`);
    }
  }
  return { header, tables: tables() };
}

/**
 * Writes a backup's rows into an empty database, in one transaction: all of it or nothing. The database is
 * brought to the backup's migrations first (`migrateTo`), the rows written, identity counters moved past them,
 * and only then the newer migrations run (`migrateToLatest`), as they would have over the original.
 */
export async function restoreDatabase(
  db: Kysely<Database>,
  content: BackupContent,
  schema: { readonly migrateTo: (name: string | null) => Promise<void>; readonly migrateToLatest: () => Promise<void> },
): Promise<Copied> {
  const { header } = content;
  const known = new Set(knownMigrations());
  const unknown = header.migrations.filter((m) => !known.has(m));
  if (unknown.length > 0) {
    throw new BackupError(`the backup was made by a newer otp-service (its schema has ${unknown.join(', ')}): restore it with that version or newer`);
  }
  const applied = await appliedMigrations(db);
  if (applied.some((m) => !header.migrations.includes(m))) {
    throw new BackupError('the target database has a newer schema than the backup: restore into a new, empty database');
  }
  await schema.migrateTo(header.migrations.at(-1) ?? null);
  const counts: Record<string, number> = {};
  await db.transaction().execute(async (trx) => {
    const tables = new Map((await dataTables(trx)).map((t) => [t.name, t]));
    const nonEmpty: string[] = [];
    for (const name of tables.keys()) {
      const { rows } = await sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM ${quoted(name)}) AS any`.execute(trx);
      if (rows[0]?.any) nonEmpty.push(name);
    }
    if (nonEmpty.length > 0) {
      throw new BackupError(`the target database is not empty (${nonEmpty.join(', ')} ${nonEmpty.length === 1 ? 'has' : 'have'} rows): restore into a new, empty database`);
    }
    for await (const t of content.tables) {
      const target = tables.get(t.table);
      if (!target) throw new BackupError(`the backup has a table ${t.table} that its own schema does not: it is not a backup of this service`);
      const columns = sql.join(t.columns.map(quoted));
      let n = 0;
      for await (const batch of t.batches) {
        await sql`
          INSERT INTO ${quoted(t.table)} (${columns}) OVERRIDING SYSTEM VALUE
          SELECT ${columns} FROM jsonb_populate_recordset(NULL::${quoted(t.table)}, ${`[${batch.join(',')}]`}::jsonb)`.execute(trx);
        n += batch.length;
      }
      counts[t.table] = n;
      for (const column of target.identity) {
        await sql`
          SELECT setval(pg_get_serial_sequence(${t.table}, ${column}), coalesce(max(${quoted(column)}), 0) + 1, false)
          FROM ${quoted(t.table)}`.execute(trx);
      }
    }
  });
  await schema.migrateToLatest();
  return { rows: counts };
}
