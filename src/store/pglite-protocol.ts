/**
 * The messages between the main thread and the worker thread that owns PGlite (pglite-thread.ts and
 * pglite-worker.ts). Everything crosses by structured clone: rows as PGlite parsed them (Dates, Uint8Arrays and
 * bigints survive it), a dump as a transferred ArrayBuffer, an error as its fields.
 */

/** What the worker is started with (workerData). */
export interface WorkerStart {
  /** The data folder, or null for an in-memory database. */
  readonly dataDir: string | null;
  /** In-memory only: start from this dump of a data folder. */
  readonly loadDataDir: Blob | null;
  /** Compiled once per process and shared by every worker, rather than compiled again by each. */
  readonly pgliteWasmModule: WebAssembly.Module;
  readonly initdbWasmModule: WebAssembly.Module;
  readonly fsBundle: Blob;
}

/** One statement and its parameters. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/**
 * A request to the worker. `query` runs its statements in order and answers with the last one's result: the
 * ones before it (a transaction's BEGIN) ride along in the same message rather than cost a round trip each; if
 * one fails, the rest are not run and the failure is the answer.
 */
export type Request =
  | { readonly id: number; readonly op: 'query'; readonly statements: readonly Statement[] }
  | { readonly id: number; readonly op: 'dump' }
  | { readonly id: number; readonly op: 'close' };

/** A statement's result, as Kysely's pool client reports it. */
export interface QueryResult<R> {
  readonly rows: R[];
  readonly affectedRows: number | undefined;
}

export type Reply =
  | { readonly id: number; readonly ok: true; readonly result: QueryResult<unknown> }
  | { readonly id: number; readonly ok: true; readonly dump: ArrayBuffer }
  | { readonly id: number; readonly ok: true; readonly closed: true }
  | { readonly id: number; readonly ok: false; readonly error: ErrorFields };

/** Said once by the worker: PGlite is open (or could not be opened). */
export type Started = { readonly started: true } | { readonly started: false; readonly error: ErrorFields };

/** An error's message and the PostgreSQL fields the store and the logs read (code, constraint, detail, ...). */
export interface ErrorFields {
  readonly message: string;
  readonly fields: Readonly<Record<string, string | number>>;
}

/** The error fields of pg's DatabaseError (as PGlite's own copy of pg-protocol sets them). */
const databaseFields = [
  'severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where', 'schema', 'table',
  'column', 'dataType', 'constraint', 'file', 'line', 'routine',
] as const;

export function errorFields(err: unknown): ErrorFields {
  if (!(err instanceof Error)) return { message: String(err), fields: {} };
  const fields: Record<string, string | number> = {};
  const source = err as unknown as Record<string, unknown>;
  for (const name of databaseFields) {
    const value = source[name];
    if (typeof value === 'string' || typeof value === 'number') fields[name] = value;
  }
  return { message: err.message, fields };
}
