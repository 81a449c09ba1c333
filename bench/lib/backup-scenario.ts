import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { LoadResult } from './load.js';

export interface BackupResult {
  readonly method: string;
  readonly verifications: number;
  readonly seconds: number;
  readonly bytes: number;
  /** Creates through HTTP alone, then while the backup ran, each for the same time, one after the other. */
  readonly createAlone: LoadResult;
  readonly createBeside: LoadResult;
  /** Whether the backup was still running when the create load beside it ended (else the ratio flatters it). */
  readonly overlappedWholeRun: boolean;
}

/** `otp-service backup` as an operator runs it (the built CLI, its own process), against `databaseUrl`. */
export function runBackupCli(repoRoot: string, databaseUrl: string, file: string): { done: Promise<{ seconds: number; bytes: number }>; running: () => boolean } {
  const started = performance.now();
  let finished = false;
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'cli', 'main.js'), 'backup', '--to', file, '--json'], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<{ seconds: number; bytes: number }>((resolve, reject) => {
    child.on('exit', (code) => {
      finished = true;
      if (code !== 0) return reject(new Error(`backup exited ${code}: ${err}`));
      const report = JSON.parse(out) as { bytes: number };
      resolve({ seconds: (performance.now() - started) / 1000, bytes: report.bytes ?? fs.statSync(file).size });
    });
  });
  return { done, running: () => !finished };
}
