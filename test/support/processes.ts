import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleness } from '../../scripts/build-if-stale.mjs';
import { testNodeFlags } from './node-flags.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let checkedBuild = false;

/**
 * The path of a module of the build (`dist/<module>.js`), which process tests run as an operator runs the service:
 * `npm test` builds first when a source changed, and a start costs a second less than compiling the sources
 * again. A build older than a source fails the test with what to do, rather than testing old code.
 */
export function built(module: string): string {
  if (!checkedBuild) {
    const stale = staleness(repoRoot);
    if (stale !== null) throw new Error(`dist/ is out of date (${stale}): run \`npm run build\` (npm test builds first)`);
    checkedBuild = true;
  }
  return path.join(repoRoot, 'dist', `${module}.js`);
}

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A long-running node process, its stdout collected. */
export interface NodeProcess {
  readonly child: ChildProcess;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
}

function spawnNode(argv: readonly string[], env: Record<string, string>, cwd = repoRoot, input?: string, timeoutMs?: number): ChildProcess {
  const child = spawn(process.execPath, [...testNodeFlags, ...argv], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(timeoutMs !== undefined && { timeout: timeoutMs, killSignal: 'SIGKILL' as const }),
  });
  if (input !== undefined) child.stdin?.end(input);
  return child;
}

/** Runs `node <argv>` to its end; one still running after `timeoutMs` is killed (its code is then null). */
export function runNode(argv: readonly string[], env: Record<string, string>, cwd = repoRoot, input?: string, timeoutMs?: number): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawnNode(argv, env, cwd, input, timeoutMs);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `node <argv>` and waits until a JSON log line carries `readyMessage`; returns that line too. */
export async function startNode(
  argv: readonly string[],
  env: Record<string, string>,
  readyMessage: string,
  timeoutMs = 60_000,
): Promise<NodeProcess & { readyLine: Record<string, unknown> }> {
  const child = spawnNode(argv, env);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const line = out.split('\n').find((l) => l.includes(`"${readyMessage}"`));
    if (line) return { child, output: () => out, exited, readyLine: JSON.parse(line) as Record<string, unknown> };
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${argv.join(' ')} exited ${child.exitCode}: ${err}${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${argv.join(' ')} did not start in time: ${err}${out}`);
}

/** Runs the built `otp-service` command (bin/otp-service.mjs) with the given settings, from `cwd` (the repository). */
/** Runs the CLI to its end; `input`, when given, is its stdin. */
export function runCli(args: readonly string[], env: Record<string, string>, cwd = repoRoot, input?: string): Promise<Ran> {
  return runNode([path.join(repoRoot, 'bin', 'otp-service.mjs'), ...args], env, cwd, input);
}

/** A server started as `node dist/main.js`, as `npm start` runs it. */
export interface ServerProcess extends NodeProcess {
  readonly url: string;
}

export async function startServerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const started = await startNode(
    [built('main')],
    { PORT: '0', HOST: '127.0.0.1', ...env },
    'otp-service listening',
    timeoutMs,
  );
  return { ...started, url: String(started.readyLine.url) };
}
