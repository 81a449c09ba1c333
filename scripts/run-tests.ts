import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/store/database.js';
import { findPostgresBin, startTempPostgres, type TempPostgres } from './temp-postgres.js';
import { testNodeFlags } from '../test/support/node-flags.js';

/**
 * `npm test`: every test file under test/, on PGlite and on a real PostgreSQL, several files at a time. Each file
 * runs in a process of its own and makes its own databases (a PostgreSQL database copied from a migrated template,
 * a PGlite loaded from a migrated dump) and takes its ports from the OS, so files share nothing but the server.
 * A file whose first lines say `// @runs-alone <why>` runs with nothing beside it.
 *
 *   npm test                                   every file; TEST_CONCURRENCY files at a time
 *   npm test -- test/http/flow.test.ts         some files
 *   npm test -- --test-name-pattern=refused    options after the files go to each file's node
 *
 * The server comes from TEST_DATABASE_URL when given, else is started here in a temporary folder; with neither,
 * the PostgreSQL tests report themselves skipped. The run ends with the slowest files and the totals.
 */

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const summaryReporter = path.join(root, 'scripts', 'test-summary-reporter.mjs');
/** Each file's last measured time, so that the longest start first and the run's tail is short. */
const durationsFile = path.join(root, 'test', 'durations.json');
const slowestShown = 15;
/** How the type check shows among the files' results. */
const typecheckResult = 'tsc --noEmit (type check)';

interface Settings {
  readonly concurrency: number;
  readonly fileTimeoutMs: number;
  /** Print every file's output, not only a failed file's. */
  readonly verbose: boolean;
  readonly writeDurations: boolean;
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, not ${JSON.stringify(raw)}`);
  return n;
}

function settings(): Settings {
  // Most files spend much of their time waiting (on a database, a peer, a child process, a deadline): at two
  // files a core, a run kept the processors busy only three quarters of the time; at three, they are full.
  const cores = os.availableParallelism();
  return {
    concurrency: positiveInt('TEST_CONCURRENCY', Math.max(2, cores * 3)),
    fileTimeoutMs: positiveInt('TEST_FILE_TIMEOUT_SECONDS', 600) * 1000,
    verbose: process.env.TEST_VERBOSE === '1',
    writeDurations: process.env.TEST_WRITE_DURATIONS === '1',
  };
}

function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(path.join(dir, e.name)) : e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []))
    .sort();
}

/** Why a file must run with nothing beside it, from a `// @runs-alone <why>` line near its top; null if it need not. */
export function runsAlone(text: string): string | null {
  const head = text.split('\n', 40).join('\n');
  return /^\/\/ @runs-alone (.+)$/m.exec(head)?.[1]?.trim() ?? null;
}

type Counts = Partial<Record<'tests' | 'suites' | 'pass' | 'fail' | 'cancelled' | 'skipped' | 'todo' | 'cpuSeconds', number>>;

interface FileResult {
  readonly file: string;
  readonly seconds: number;
  readonly ok: boolean;
  readonly counts: Counts;
  readonly alone: boolean;
}

/** The server for the PostgreSQL tests, and a migrated database on it that each file's databases copy. */
interface Postgres {
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

async function postgres(): Promise<Postgres | null> {
  let server: TempPostgres | null = null;
  let url = process.env.TEST_DATABASE_URL;
  if (!url) {
    if (!findPostgresBin()) {
      process.stdout.write('PostgreSQL not found and TEST_DATABASE_URL unset: PostgreSQL tests will be skipped\n');
      return null;
    }
    server = await startTempPostgres({ fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' });
    url = server.url;
    process.stdout.write(`PostgreSQL for tests: ${server.version} on port ${server.port}\n`);
  }
  const template = `otp_test_template_${process.pid}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(statement);
    } finally {
      await c.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS ${template}`);
  await admin(`CREATE DATABASE ${template}`);
  const templateUrl = new URL(url);
  templateUrl.pathname = `/${template}`;
  const migrated = await openDatabase({ databaseUrl: templateUrl.toString(), dataDir: '', poolSize: 1, timeoutMs: 60_000 });
  await migrated.close();
  return {
    env: { TEST_DATABASE_URL: url, TEST_DATABASE_TEMPLATE: template },
    async close() {
      if (server) server.stop();
      else await admin(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => undefined);
    },
  };
}

/**
 * A migrated, empty embedded database twice over, made once for the run: as a data folder, which a test copies for
 * a server or CLI process to open (PGLITE_TEMPLATE_DIR), and as a dump, which an in-process harness loads into
 * memory (PGLITE_TEMPLATE). A new PGlite database takes seconds to make; a copy, a fraction of one.
 */
async function embeddedTemplates(): Promise<{ env: Record<string, string>; remove(): void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `otp-pglite-template-${process.pid}-`));
  const dataDir = path.join(dir, 'data');
  const dumpFile = path.join(dir, 'dump.tar');
  const handle = await openDatabase({ databaseUrl: undefined, dataDir, poolSize: 1, timeoutMs: 60_000 });
  try {
    fs.writeFileSync(dumpFile, Buffer.from(await (await handle.dumpDataDir()).arrayBuffer()));
  } finally {
    await handle.close();
  }
  return {
    env: { PGLITE_TEMPLATE: dumpFile, PGLITE_TEMPLATE_DIR: dataDir },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

function readDurations(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(durationsFile, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

const running = new Set<ChildProcess>();

/** Kills a file's process and everything it started (its peers, browsers, servers): they share its process group. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function runFile(file: string, nodeOptions: readonly string[], env: NodeJS.ProcessEnv, s: Settings): Promise<Omit<FileResult, 'alone'>> {
  const countsFile = path.join(os.tmpdir(), `otp-test-${process.pid}-${path.basename(file)}-${Math.random().toString(36).slice(2)}.json`);
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        ...testNodeFlags,
        '--import',
        'tsx',
        `--test-reporter=${summaryReporter}`,
        `--test-reporter-destination=${countsFile}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        ...nodeOptions,
        file,
      ],
      { cwd: root, env: { ...env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    running.add(child);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, s.fileTimeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      // Whatever the file left running (a peer it did not stop) ends with it.
      killGroup(child);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      let counts: Counts = {};
      try {
        counts = JSON.parse(fs.readFileSync(countsFile, 'utf8')) as Counts;
      } catch {
        // The file died before its reporter wrote: it failed, and its output says why.
      }
      fs.rmSync(countsFile, { force: true });
      const ok = code === 0 && !timedOut && (counts.fail ?? 0) === 0 && (counts.cancelled ?? 0) === 0 && counts.tests !== undefined;
      const why = timedOut ? `\n(killed after ${s.fileTimeoutMs / 1000} s: TEST_FILE_TIMEOUT_SECONDS)\n` : signal ? `\n(ended by ${signal})\n` : '';
      const mark = ok ? '✔' : '✖';
      const tally = `${counts.pass ?? 0} passed${counts.skipped ? `, ${counts.skipped} skipped` : ''}${counts.fail ? `, ${counts.fail} failed` : ''}${counts.cancelled ? `, ${counts.cancelled} cancelled` : ''}`;
      const cpu = counts.cpuSeconds != null ? `, ${counts.cpuSeconds.toFixed(1)} s of processor` : '';
      const line = `${mark} ${file} (${seconds.toFixed(1)} s${cpu}; ${tally})\n`;
      process.stdout.write(!ok || s.verbose ? `${line}${output}${why}\n` : line);
      resolve({ file, seconds, ok, counts });
    });
  });
}

/** `tsc --noEmit` over src, test, scripts and bench, reported as a file of the run is: its output only if it fails. */
async function typeCheck(): Promise<FileResult> {
  const started = process.hrtime.bigint();
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  running.delete(child);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const ok = code === 0;
  process.stdout.write(`${ok ? '✔' : '✖'} ${typecheckResult} (${seconds.toFixed(1)} s)\n${ok ? '' : `${output}\n`}`);
  return { file: typecheckResult, seconds, ok, counts: {}, alone: false };
}

/** Runs the files `concurrency` at a time, longest first by their last measured time. */
async function pool(files: readonly string[], concurrency: number, run: (file: string) => Promise<FileResult>): Promise<FileResult[]> {
  const queue = [...files];
  const results: FileResult[] = [];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) results.push(await run(file));
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  return results;
}

function report(results: readonly FileResult[], wallSeconds: number, s: Settings): void {
  const sum = (k: keyof Counts) => results.reduce((n, r) => n + (r.counts[k] ?? 0), 0);
  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, slowestShown);
  const width = Math.max(...slowest.map((r) => r.file.length));
  const lines = [
    '',
    `Slowest ${slowest.length} of ${results.length} (the files and the type check):`,
    `  ${'time'.padStart(7)}    ${'processor'.padStart(9)}    file`,
    ...slowest.map(
      (r) =>
        `  ${r.seconds.toFixed(1).padStart(7)} s  ${(r.counts.cpuSeconds?.toFixed(1) ?? '?').padStart(9)} s  ${r.file.padEnd(width)}${r.alone ? '  (alone)' : ''}`,
    ),
    '',
    `files ${results.filter((r) => r.file !== typecheckResult).length}, failed ${results.filter((r) => !r.ok).length}`,
    `tests ${sum('tests')}, pass ${sum('pass')}, fail ${sum('fail')}, cancelled ${sum('cancelled')}, skipped ${sum('skipped')}, todo ${sum('todo')}`,
    `time ${wallSeconds.toFixed(1)} s, ${s.concurrency} files at a time; the files' own times add up to ${results.reduce((n, r) => n + r.seconds, 0).toFixed(1)} s, their processor time to ${sum('cpuSeconds').toFixed(1)} s`,
  ];
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0) lines.push('', 'Failed:', ...failed.map((r) => `  ${r.file}`));
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<number> {
  const s = settings();
  const args = process.argv.slice(2);
  const named = args.filter((a) => !a.startsWith('-'));
  const nodeOptions = args.filter((a) => a.startsWith('-'));
  const files = named.length > 0 ? named : testFiles('test');
  const started = process.hrtime.bigint();
  // The whole run type-checks too, beside the files rather than before them: the compiler is one process on one core
  // for a minute, which the files' waits leave room for.
  const typecheck = named.length === 0 ? typeCheck() : null;

  const database = await postgres();
  const embedded = await embeddedTemplates();
  const env: NodeJS.ProcessEnv = { ...process.env, ...database?.env, ...embedded.env };
  // Node 22 and later keep the code they compiled on disk, and each of the hundreds of node processes a run starts
  // (a file, a server, a CLI command) reads it back rather than compiling the same modules again.
  env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'otp-service-test-compile-cache');
  const stop = async () => {
    for (const child of running) killGroup(child);
    await database?.close();
    embedded.remove();
  };
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      void stop().finally(() => process.exit(code));
    });
  }
  try {
    const known = readDurations();
    const byLength = (a: string, b: string) => (known[b] ?? 0) - (known[a] ?? 0) || a.localeCompare(b);
    const alone = files.filter((f) => runsAlone(fs.readFileSync(f, 'utf8')) !== null).sort(byLength);
    const together = files.filter((f) => !alone.includes(f)).sort(byLength);
    process.stdout.write(`${files.length} test files, ${s.concurrency} at a time${alone.length ? `, then ${alone.length} alone` : ''}\n`);
    const results: FileResult[] = [];
    const run = (isAlone: boolean) => async (file: string) => ({ ...(await runFile(file, nodeOptions, env, s)), alone: isAlone });
    results.push(...(await pool(together, s.concurrency, run(false))));
    results.push(...(await pool(alone, 1, run(true))));
    if (typecheck) results.push(await typecheck);
    report(results, Number(process.hrtime.bigint() - started) / 1e9, s);
    if (s.writeDurations && named.length === 0) {
      const durations = Object.fromEntries([...results].filter((r) => r.file !== typecheckResult).sort((a, b) => a.file.localeCompare(b.file)).map((r) => [r.file, Math.round(r.seconds)]));
      fs.writeFileSync(durationsFile, `${JSON.stringify(durations, null, 1)}\n`);
    }
    return results.every((r) => r.ok) && results.length > 0 ? 0 : 1;
  } finally {
    await stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`test runner failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
