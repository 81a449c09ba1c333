import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A service process run from source (`node --import tsx`), its log lines collected. */
export interface ChildService {
  readonly child: ChildProcess;
  /** Everything printed on stdout so far. */
  output(): string;
  readonly exited: Promise<number | null>;
}

/** Starts `node --import tsx <entry> ...args` and waits until a log line carries `readyMessage`. */
export async function startChild(
  entry: string,
  args: readonly string[],
  env: Record<string, string>,
  readyMessage: string,
  timeoutMs = 60_000,
): Promise<ChildService & { readyLine: Record<string, unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, entry), ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const line = out.split('\n').find((l) => l.includes(`"${readyMessage}"`));
    if (line) return { child, output: () => out, exited, readyLine: JSON.parse(line) as Record<string, unknown> };
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${entry} exited ${child.exitCode}: ${err}${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${entry} did not start in time: ${err}${out}`);
}

/** The server (src/main.ts), with the URL it listens on. */
export async function startServerChild(env: Record<string, string>): Promise<ChildService & { url: string }> {
  const started = await startChild('src/main.ts', [], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, 'otp-service listening');
  return { ...started, url: String(started.readyLine.url) };
}

/** Runs the CLI from source to the end. */
export function runCliFromSource(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/main.ts'), ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Kills a child and waits for it to be gone. */
export async function kill(service: ChildService, signal: NodeJS.Signals): Promise<number | null> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
  return service.exited;
}
