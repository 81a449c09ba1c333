import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the bench scripts. */
export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A server started in its own process, so its CPU is apart from the load generator's. */
export interface Child<T> {
  readonly pid: number;
  /** What the child printed as its first JSON line (its URL and whatever else it reports). */
  readonly info: T;
  /** Resident set size of the child right now, in bytes (Linux /proc). */
  rss(): number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills whatever children are still alive (last-resort cleanup on error or Ctrl-C). */
export function killAllChildren(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/**
 * Runs `bench/<script>` under tsx with `env` and waits for its first stdout line, a JSON object the script
 * prints once it listens. Its stderr is kept in memory and shown if it fails to start.
 */
export async function startChild<T>(
  script: string,
  env: NodeJS.ProcessEnv,
  parse: (value: unknown) => T,
  timeoutMs = 60_000,
  /** The bench folder to run it from (another checkout's, for a baseline). */
  dir = benchDir,
): Promise<Child<T>> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(dir, script)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  exited.then(() => running.delete(child), () => undefined);

  const info = await new Promise<T>((resolve, reject) => {
    let buffer = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${script}: ${why}\n${stderr.trim()}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs} ms`), timeoutMs);
    const onExit = (code: number | null, signal: string | null) =>
      fail(`exited before it was ready (code ${code}, signal ${signal})`);
    child.once('exit', onExit);
    child.stdout?.setEncoding('utf8');
    const onData = (chunk: string) => {
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      clearTimeout(timer);
      try {
        resolve(parse(JSON.parse(buffer.slice(0, newline))));
      } catch (err) {
        child.kill('SIGKILL');
        reject(new Error(`${script}: bad ready line ${buffer.slice(0, newline)}: ${String(err)}`));
      }
      // Keep draining stdout so the child never blocks on a full pipe.
      child.stdout?.resume();
    };
    child.stdout?.on('data', onData);
  });

  const pid = child.pid ?? 0;
  return {
    pid,
    info,
    rss: () => readRss(pid),
    stop: async (graceMs = 15_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** VmRSS of a process from /proc, in bytes; 0 when it cannot be read. */
export function readRss(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Narrows a parsed ready line to an object with string fields `keys`. */
export function stringFields<K extends string>(value: unknown, keys: readonly K[]): Record<K, string> {
  if (typeof value !== 'object' || value === null) throw new Error('expected an object');
  const out: Partial<Record<K, string>> = {};
  for (const key of keys) {
    const v: unknown = (value as Record<string, unknown>)[key];
    if (typeof v !== 'string') throw new Error(`expected string field ${key}`);
    out[key] = v;
  }
  return out as Record<K, string>;
}
