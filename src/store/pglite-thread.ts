import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import pg from 'pg';
import { UnavailableError } from '../domain/unavailable.js';
import type { ErrorFields, QueryResult, Reply, Request, Started, Statement, WorkerStart } from './pglite-protocol.js';

/** What opening the embedded database needs: a data folder (null: in memory), and for memory a dump to start from. */
export interface PGliteThreadOptions {
  readonly dataDir: string | null;
  readonly loadDataDir?: Blob;
  /** Retry-After of the UnavailableError that requests get once the thread is gone. */
  readonly retryAfterSeconds: number;
}

type Pending = { resolve: (reply: Reply) => void; reject: (err: Error) => void };
type Distributive<T> = T extends unknown ? Omit<T, 'id'> : never;

/**
 * The embedded database (PGlite) in a worker thread of its own (pglite-worker.ts), so that its WebAssembly work
 * runs beside the event loop instead of on it: HTTP, tokens and webhooks go on answering while it works. This is
 * the main thread's handle: it sends statements over the thread's port and gives back what PGlite answered, a
 * PostgreSQL error rebuilt with all its fields. A thread that dies (a crash, an abort of the WebAssembly) fails
 * every request in flight and every later one with an UnavailableError, never leaving one waiting, and tells
 * `lost`, so that the process can stop and be started again by its supervisor.
 */
export class PGliteThread {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private gone: UnavailableError | null = null;
  private closing = false;
  private readonly exited: Promise<void>;
  private onLost: ((err: Error) => void) | null = null;
  /** Settles when the thread has died unexpectedly (not by close()), with why. */
  readonly lost: Promise<Error>;

  private constructor(
    private readonly worker: Worker,
    private readonly retryAfterSeconds: number,
  ) {
    this.lost = new Promise((resolve) => {
      this.onLost = resolve;
    });
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (err) => this.die(err));
    worker.on('exit', (code) => this.die(new Error(`the embedded database's thread exited (code ${code})`)));
    // Idle, the thread does not keep the process alive (a forgotten handle must not hang a command); a request
    // in flight does (see send).
    worker.unref();
  }

  /** Starts the thread and waits until PGlite is open in it (migrations are the caller's). */
  static async start(options: PGliteThreadOptions): Promise<PGliteThread> {
    const shared = await sharedArtifacts();
    const workerData: WorkerStart = { dataDir: options.dataDir, loadDataDir: options.loadDataDir ?? null, ...shared };
    const [script, scriptOptions] = await workerScript();
    const worker = new Worker(script, { ...scriptOptions, workerData });
    let failed: (err: Error) => void = () => undefined;
    const exited = (code: number) => failed(new Error(`the embedded database's thread exited (code ${code}) while opening`));
    const started = await new Promise<Started>((resolve, reject) => {
      failed = reject;
      worker.once('error', failed);
      worker.once('exit', exited);
      worker.once('message', (message: Started) => resolve(message));
    }).finally(() => {
      // Only this wait's own listeners: the worker keeps listeners of its own on these events.
      worker.off('error', failed);
      worker.off('exit', exited);
    });
    if (!started.started) {
      // The thread rethrows what failed after saying it: told already, nobody is left to hear it again.
      worker.on('error', () => undefined);
      await worker.terminate();
      throw rebuildError(started.error);
    }
    return new PGliteThread(worker, options.retryAfterSeconds);
  }

  /** Runs the statements in order in one message and answers with the last one's result. */
  async query<R>(statements: readonly Statement[]): Promise<QueryResult<R>> {
    const reply = await this.send({ op: 'query', statements });
    if (!('result' in reply)) throw new Error('the embedded database answered a query with something else');
    return reply.result as QueryResult<R>;
  }

  /** A dump of the data folder (`otp-service backup`'s snapshot, tests' templates). */
  async dump(): Promise<Blob> {
    const reply = await this.send({ op: 'dump' });
    if (!('dump' in reply)) throw new Error('the embedded database answered a dump with something else');
    return new Blob([reply.dump]);
  }

  /** Closes PGlite in its thread (its last checkpoint written) and waits for the thread to end. */
  async close(): Promise<void> {
    if (this.gone) return;
    this.closing = true;
    await this.send({ op: 'close' });
    // Until the thread has ended, it keeps the process alive (unreferenced when idle, see the constructor).
    this.worker.ref();
    await this.exited;
  }

  /** Tests: ends the thread at once, as a crash would (in-flight requests then fail with an UnavailableError). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }

  private send(request: Distributive<Request>): Promise<Reply> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id } as Request);
    }).then((reply) => {
      if (!reply.ok) throw rebuildError(reply.error);
      return reply;
    });
  }

  private settle(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    waiting.resolve(reply);
  }

  private die(cause: Error): void {
    if (this.gone) return;
    this.gone = new UnavailableError('the embedded database stopped', this.retryAfterSeconds, { cause });
    for (const waiting of this.pending.values()) waiting.reject(this.gone);
    this.pending.clear();
    if (!this.closing) this.onLost?.(cause);
  }
}

/** The error the worker reported, again on this side: a PostgreSQL error as pg's DatabaseError, with its fields. */
export function rebuildError(error: ErrorFields): Error {
  if (typeof error.fields.code !== 'string') return new Error(error.message);
  const rebuilt = new pg.DatabaseError(error.message, 0, 'error');
  Object.assign(rebuilt, error.fields);
  return rebuilt;
}

type Shared = Pick<WorkerStart, 'pgliteWasmModule' | 'initdbWasmModule' | 'fsBundle'>;
let shared: Promise<Shared> | null = null;

/**
 * PGlite's WebAssembly, compiled once per process, and its file-system bundle, read once: every thread gets the
 * same (a compiled module and a Blob cross to a worker without a copy), so a process that opens the database
 * again (tests, `otp-service` commands) does not pay for the compile again.
 */
function sharedArtifacts(): Promise<Shared> {
  shared ??= (async () => {
    const dist = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
    const read = (name: string) => fs.promises.readFile(path.join(dist, name));
    const [pglite, initdb, bundle] = await Promise.all([read('pglite.wasm'), read('initdb.wasm'), read('pglite.data')]);
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([WebAssembly.compile(pglite), WebAssembly.compile(initdb)]);
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([bundle]) };
  })();
  shared.catch(() => {
    shared = null;
  });
  return shared;
}

/**
 * The worker from pglite-worker.js beside this file; when this file runs as TypeScript (tests and the bench run
 * the sources under tsx), from the .ts file bundled once a process by esbuild (its packages imported from where
 * this process resolves them). Node 20 does not carry tsx's loader into workers, and registering it in each
 * worker cost half a second of processor a database opened, a third of what opening it costs.
 */
function workerScript(): Promise<[URL, WorkerOptions?]> {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return Promise.resolve([new URL('./pglite-worker.js', here)]);
  bundledWorker ??= bundle(new URL('./pglite-worker.ts', here));
  return bundledWorker;
}

let bundledWorker: Promise<[URL, WorkerOptions]> | null = null;

/** The bundle, and no node options: a worker takes its process's by default, and `--import tsx` would load tsx in it. */
async function bundle(entry: URL): Promise<[URL, WorkerOptions]> {
  const { build } = await import('esbuild');
  const built = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'packages-where-this-process-finds-them',
        setup: (b) => b.onResolve({ filter: /^[^./]/ }, (args) => ({ path: import.meta.resolve(args.path), external: true })),
      },
    ],
  });
  const code = built.outputFiles[0]?.text;
  if (code === undefined) throw new Error('esbuild gave no bundle of pglite-worker.ts');
  return [new URL(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`), { execArgv: [] }];
}
