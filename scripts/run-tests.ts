import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/store/database.js';
import { findPostgresBin, startTempPostgres, type TempPostgres } from './temp-postgres.js';
import { databaseUrl, onServer } from '../test/support/databases.js';
import { testNodeFlags } from '../test/support/node-flags.js';

/**
 * `npm test`: every test file under test/, on PGlite and on a real PostgreSQL, several processes at a time, each
 * taking the next file, longest first, as it ends one (scripts/test-batch.mjs), so that the service's modules and
 * PGlite are loaded once a process rather than once a file. Each file makes its own databases (a
 * PostgreSQL database copied from a migrated template, a PGlite loaded from a migrated dump) and takes its ports
 * from the OS, so files share nothing but the server. A file whose first lines say `// @runs-alone <why>` runs
 * in a process of its own with nothing beside it.
 *
 *   npm test                                   every file; TEST_CONCURRENCY processes at a time
 *   npm test -- test/http/flow.test.ts         some files
 *   npm test -- --test-name-pattern=refused    options after the files go to each file's node
 *
 * The server comes from TEST_DATABASE_URL when given, else is started here in a temporary folder; with neither,
 * the PostgreSQL tests report themselves skipped. The run ends with the slowest files and the totals.
 */

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const summaryReporter = path.join(root, 'scripts', 'test-summary-reporter.mjs');
const batchScript = path.join(root, 'scripts', 'test-batch.mjs');
/** Each file's last measured time, so that the longest start first and the run's tail is short. */
const durationsFile = path.join(root, 'test', 'durations.json');
const slowestShown = 15;
/** How the type check shows among the files' results. */
const typecheckResult = 'tsgo --noEmit (type check)';

interface Settings {
  readonly concurrency: number;
  readonly fileTimeoutMs: number;
  /** At most how many files one process runs before a new one takes its place; null: as many as there are. */
  readonly filesPerProcess: number | null;
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
  // Two files a core. Most files wait much of their time (on a database, a peer, a child process, a deadline),
  // but what they start (PostgreSQL, Chromium, servers, CLI processes) fills the processors: on 2 cores, the same
  // commit's whole run took 829 s at 4 files at once, 889 s at 6 and 933 s at 8, whose processor time rose with
  // the contention (1,228 s, 1,221 s, 1,400 s) and where a browser test ran past its 10 s wait.
  const cores = os.availableParallelism();
  return {
    concurrency: positiveInt('TEST_CONCURRENCY', Math.max(2, cores * 2)),
    fileTimeoutMs: positiveInt('TEST_FILE_TIMEOUT_SECONDS', 600) * 1000,
    // Loading the service and PGlite costs a process about ten seconds of processor: as few processes as run at
    // once (a run's processor time 1,391 s with groups of 6 files, 1,200 s with one group a process).
    filesPerProcess: process.env.TEST_FILES_PER_PROCESS ? positiveInt('TEST_FILES_PER_PROCESS', 1) : null,
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

type Counts = Partial<Record<'tests' | 'suites' | 'pass' | 'fail' | 'cancelled' | 'skipped' | 'todo', number>>;

interface FileResult {
  readonly file: string;
  /** The file's own time and processor time, from its first test's hooks to its last one's. */
  readonly seconds: number;
  readonly cpuSeconds: number | null;
  readonly ok: boolean;
  readonly counts: Counts;
  readonly alone: boolean;
}

/** A process of the run: its files, its time, and the processor time of it and of the processes it waited for. */
interface ProcessResult {
  readonly files: readonly FileResult[];
  readonly seconds: number;
  readonly cpuSeconds: number | null;
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
  await onServer(url, `DROP DATABASE IF EXISTS ${template}`);
  await onServer(url, `CREATE DATABASE ${template}`);
  const migrated = await openDatabase({ databaseUrl: databaseUrl(url, template), dataDir: '', poolSize: 1, timeoutMs: 60_000 });
  await migrated.close();
  return {
    env: { TEST_DATABASE_URL: url, TEST_DATABASE_TEMPLATE: template },
    async close() {
      if (server) server.stop();
      else await onServer(url, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => undefined);
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

/** A child's exit and everything it wrote, stdout and stderr interleaved as they came. */
function collect(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  running.add(child);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, output });
    });
  });
}

/** What scripts/test-summary-reporter.mjs writes for a process. */
interface ProcessReport {
  readonly files: Record<string, { counts: Counts; ok: boolean; seconds: number; cpuSeconds: number | null }>;
  readonly cpuSeconds: number | null;
}

/**
 * Runs test files one after another in one node process (scripts/test-batch.mjs), in a process group of its own,
 * taking each next file from `queue` as it finishes the last, up to `maxFiles` (null: until none is left); prints
 * a line for each file, and the process's output when a file failed (or TEST_VERBOSE is set).
 */
async function runProcess(
  queue: string[],
  maxFiles: number | null,
  alone: boolean,
  nodeOptions: readonly string[],
  env: NodeJS.ProcessEnv,
  s: Settings,
): Promise<ProcessResult> {
  const reportFile = path.join(os.tmpdir(), `otp-test-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  const started = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [
      ...testNodeFlags,
      '--import',
      'tsx',
      `--test-reporter=${summaryReporter}`,
      `--test-reporter-destination=${reportFile}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      ...nodeOptions,
      batchScript,
    ],
    {
      cwd: root,
      env: { ...env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0', TEST_FILE_TIMEOUT_MS: String(s.fileTimeoutMs) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
    },
  );
  const files: string[] = [];
  // Each file is bounded inside the process; this bounds a process that hangs outside any file's tests.
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const bound = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, s.fileTimeoutMs + 60_000);
  };
  bound();
  const printed = new Set<string>();
  child.on('message', (message: { file?: string; result?: ProcessReport['files'][string] }) => {
    if (message.result !== undefined && message.file !== undefined) {
      const r = message.result;
      printed.add(message.file);
      printFile({ file: message.file, seconds: r.seconds, cpuSeconds: r.cpuSeconds, ok: r.ok && r.counts.fail === 0 && r.counts.cancelled === 0, counts: r.counts, alone });
      return;
    }
    const file = maxFiles === null || files.length < maxFiles ? queue.shift() : undefined;
    if (file !== undefined) {
      files.push(file);
      bound();
    }
    if (child.connected) child.send({ file: file ?? null });
  });
  const { code, signal, output } = await collect(child);
  clearTimeout(timer);
  // Whatever the files left running (a peer they did not stop) ends with them.
  killGroup(child);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  let reported: ProcessReport = { files: {}, cpuSeconds: null };
  try {
    reported = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as ProcessReport;
  } catch {
    // The process died before its reporter wrote: its files failed, and its output says why.
  }
  fs.rmSync(reportFile, { force: true });
  const passed = (file: string) => {
    const r = reported.files[file];
    return r !== undefined && r.ok && r.counts.fail === 0 && r.counts.cancelled === 0;
  };
  // A failed file fails its process; a process that failed with every file passed failed outside them, and
  // none of its files can be trusted.
  const explained = code === 0 || files.some((f) => !passed(f));
  const results = files.map((file): FileResult => {
    const r = reported.files[file];
    if (!r) return { file, seconds: 0, cpuSeconds: null, ok: false, counts: {}, alone };
    return { file, seconds: r.seconds, cpuSeconds: r.cpuSeconds, ok: passed(file) && explained && !timedOut, counts: r.counts, alone };
  });
  for (const r of results) if (!printed.has(r.file) || !r.ok) printFile(r);
  const failedOutside = code !== 0 && files.length === 0;
  if (!results.every((r) => r.ok) || failedOutside || s.verbose) {
    const why = timedOut
      ? `(killed after ${s.fileTimeoutMs / 1000 + 60} s on one file: TEST_FILE_TIMEOUT_SECONDS)\n`
      : signal
        ? `(ended by ${signal})\n`
        : '';
    const label = files.length === 1 ? files[0] : `the process of ${files.length} files (${files.join(', ')})`;
    process.stdout.write(`--- output of ${label}\n${output}${why}\n`);
  }
  const failure: FileResult[] = failedOutside ? [{ file: 'a test process (before its first file)', seconds: 0, cpuSeconds: null, ok: false, counts: {}, alone }] : [];
  return { files: [...results, ...failure], seconds, cpuSeconds: reported.cpuSeconds };
}

/** A file's line: ✔ or ✖, its name, its time and processor time, and its counts. */
function printFile(r: FileResult): void {
  const c = r.counts;
  const tally = c.tests === undefined
    ? 'no result: the process ended before the file did'
    : `${c.pass ?? 0} passed${c.skipped ? `, ${c.skipped} skipped` : ''}${c.fail ? `, ${c.fail} failed` : ''}${c.cancelled ? `, ${c.cancelled} cancelled` : ''}`;
  const cpu = r.cpuSeconds != null ? `, ${r.cpuSeconds.toFixed(1)} s of processor` : '';
  process.stdout.write(`${r.ok ? '✔' : '✖'} ${r.file} (${r.seconds.toFixed(1)} s${cpu}; ${tally})\n`);
}

/**
 * The type check of src, test, scripts and bench, reported as a file of the run is: its output only if it fails.
 * TypeScript 7's native compiler (tsgo), on one thread beside the files: the same checks as `tsc --noEmit` (npm
 * run typecheck) in 6 s of processor where tsc takes 80.
 */
async function typeCheck(): Promise<ProcessResult> {
  const started = process.hrtime.bigint();
  const tsgo = path.join(root, 'node_modules', '@typescript', 'native-preview', 'bin', 'tsgo');
  const { code, output } = await collect(
    spawn(process.execPath, [tsgo, '-p', 'tsconfig.json', '--noEmit', '--singleThreaded'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const ok = code === 0;
  process.stdout.write(`${ok ? '✔' : '✖'} ${typecheckResult} (${seconds.toFixed(1)} s)\n${ok ? '' : `${output}\n`}`);
  return { files: [{ file: typecheckResult, seconds, cpuSeconds: null, ok, counts: {}, alone: false }], seconds, cpuSeconds: null };
}

/** The files, longest first by their last measured times (a file with no measured time counts as the average). */
export function longestFirst(files: readonly string[], known: Readonly<Record<string, number>>): string[] {
  const measured = files.map((f) => known[f]).filter((t): t is number => t !== undefined);
  const average = measured.length > 0 ? measured.reduce((a, b) => a + b, 0) / measured.length : 1;
  const length = (f: string) => known[f] ?? average;
  return [...files].sort((a, b) => length(b) - length(a) || a.localeCompare(b));
}

/**
 * Runs `queue`'s files in `concurrency` processes at once, each taking the next file as it finishes one (so that
 * all end within about one file of each other), and starting again after `maxFiles` files when that is set.
 */
async function pool(
  queue: string[],
  concurrency: number,
  run: (queue: string[]) => Promise<ProcessResult>,
): Promise<ProcessResult[]> {
  const results: ProcessResult[] = [];
  const slot = async () => {
    while (queue.length > 0) {
      const result = await run(queue);
      results.push(result);
      // A process that ended before taking a file (it failed to start) would fail the same way again.
      if (!result.files.some((f) => f.counts.tests !== undefined)) break;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, slot));
  return results;
}

function report(processes: readonly ProcessResult[], wallSeconds: number, s: Settings): void {
  const results = processes.flatMap((p) => p.files);
  const sum = (k: keyof Counts) => results.reduce((n, r) => n + (r.counts[k] ?? 0), 0);
  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, slowestShown);
  const width = Math.max(...slowest.map((r) => r.file.length));
  const files = results.filter((r) => r.file !== typecheckResult);
  const testProcesses = processes.filter((p) => p.files.some((r) => r.file !== typecheckResult));
  const lines = [
    '',
    `Slowest ${slowest.length} of ${results.length} (the files and the type check):`,
    `  ${'time'.padStart(7)}    ${'processor'.padStart(9)}    file`,
    ...slowest.map(
      (r) => `  ${r.seconds.toFixed(1).padStart(7)} s  ${(r.cpuSeconds?.toFixed(1) ?? '?').padStart(9)} s  ${r.file.padEnd(width)}${r.alone ? '  (alone)' : ''}`,
    ),
    '',
    `files ${files.length}, failed ${results.filter((r) => !r.ok).length}`,
    `tests ${sum('tests')}, pass ${sum('pass')}, fail ${sum('fail')}, cancelled ${sum('cancelled')}, skipped ${sum('skipped')}, todo ${sum('todo')}`,
    `time ${wallSeconds.toFixed(1)} s: ${testProcesses.length} process${testProcesses.length === 1 ? '' : 'es'}, ${s.concurrency} at a time, took ${testProcesses.reduce((n, p) => n + p.seconds, 0).toFixed(1)} s ` +
      `and ${testProcesses.reduce((n, p) => n + (p.cpuSeconds ?? 0), 0).toFixed(1)} s of processor; the files' own times add up to ${files.reduce((n, r) => n + r.seconds, 0).toFixed(1)} s`,
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
  // A file named twice runs once: a module is imported once a process, and results are kept by file.
  const files = named.length > 0 ? [...new Set(named.map((f) => path.relative(root, path.resolve(f))))] : testFiles('test');
  const started = process.hrtime.bigint();
  // The whole run type-checks too, beside the files rather than before them: one thread for a few seconds.
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
    const alone = files.filter((f) => runsAlone(fs.readFileSync(f, 'utf8')) !== null);
    const together = longestFirst(files.filter((f) => !alone.includes(f)), known);
    const processes = Math.min(s.concurrency, together.length);
    process.stdout.write(
      `${files.length} test files in ${processes} process${processes === 1 ? '' : 'es'} at a time, each taking the next file as it ends one${alone.length ? `, then ${alone.length} alone` : ''}\n`,
    );
    const results: ProcessResult[] = [];
    results.push(...(await pool(together, s.concurrency, (queue) => runProcess(queue, s.filesPerProcess, false, nodeOptions, env, s))));
    results.push(...(await pool(longestFirst(alone, known), 1, (queue) => runProcess(queue, 1, true, nodeOptions, env, s))));
    if (typecheck) results.push(await typecheck);
    report(results, Number(process.hrtime.bigint() - started) / 1e9, s);
    if (s.writeDurations && named.length === 0) {
      const durations = Object.fromEntries(results.flatMap((p) => p.files).filter((r) => r.file !== typecheckResult).sort((a, b) => a.file.localeCompare(b.file)).map((r) => [r.file, Math.round(r.seconds * 10) / 10]));
      fs.writeFileSync(durationsFile, `${JSON.stringify(durations, null, 1)}\n`);
    }
    return results.every((p) => p.files.every((r) => r.ok)) && results.length > 0 ? 0 : 1;
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
