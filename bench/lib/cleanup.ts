import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

type Cleanup = () => Promise<void> | void;
const cleanups: Cleanup[] = [];

/** Registers something to undo at the end of the run (last registered, first undone). */
export function onCleanup(step: Cleanup): void {
  cleanups.push(step);
}

/** Undoes everything registered; a failing step is reported and the others still run. */
export async function cleanUp(report: (text: string) => void): Promise<void> {
  while (cleanups.length > 0) {
    const step = cleanups.pop();
    try {
      await step?.();
    } catch (err) {
      report(`cleanup step failed: ${String(err)}`);
    }
  }
}

/** A fresh temporary folder, removed at cleanup. */
export function tempDir(tag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `otp-bench-${tag}-`));
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `work` at most once, however often it is called. */
export function once(work: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | null = null;
  return () => (done ??= work());
}
