import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onCleanup } from './cleanup.js';

/**
 * A detached worktree of `ref` beside this checkout, with this checkout's node_modules; removed at the end.
 * Answers its bench folder (a baseline service is started from there).
 */
export function baselineCheckout(ref: string): string {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-bench-baseline-'));
  execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', dir, ref], { stdio: 'ignore' });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  onCleanup(() => {
    try {
      execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', dir], { stdio: 'ignore' });
    } catch {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  return path.join(dir, 'bench');
}

/**
 * A fresh database `name` on the server of `serverUrl` (a baseline side migrates its own schema there), and its URL.
 */
export async function freshDatabase(admin: { query(text: string): Promise<unknown> }, serverUrl: string, name: string): Promise<string> {
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
