import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built `otp-service` command (bin/otp-service.mjs) with the given settings. */
export function runCli(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'otp-service.mjs'), ...args], {
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

/** A server started as `node dist/main.js`, as `npm start` runs it. */
export interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
}

export async function startServerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'main.js')], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const line = out.split('\n').find((l) => l.includes('"otp-service listening"'));
    if (line) {
      const url = (JSON.parse(line) as { url: string }).url;
      return { child, url, output: () => out, exited };
    }
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${err}${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start in time: ${err}${out}`);
}
