import path from 'node:path';
import { after, before, describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cpuSeconds, fileUsage } from './test-summary-reporter.mjs';

/**
 * One process of `npm test` running test files one after another (scripts/run-tests.ts): each file's tests, hooks
 * included, become a suite named for the file, so nothing a file declares at its top reaches the next, while the
 * modules they share (the service, the harness, PGlite's compiled WebAssembly and the embedded database it holds)
 * are loaded once for all of them rather than once a file: in a process of their own, that was most of a small
 * file's processor time.
 *
 *   node --import tsx --test-reporter=... scripts/test-batch.mjs test/a.test.ts test/b.test.ts
 *
 * Without files, it asks the runner for each next one over the IPC channel (`{ next: true }`, answered with
 * `{ file }`, or `{ file: null }` when none is left), so that every process of a run stays busy to the end
 * whatever each file takes. TEST_FILE_TIMEOUT_MS bounds each file: one that outlasts it is cancelled and the next
 * one runs.
 */
const timeout = Number(process.env.TEST_FILE_TIMEOUT_MS) || Infinity;

/** Runs one file as a suite; resolves once it has ended, passed or not. */
function runFile(file) {
  return describe(file, { timeout }, async () => {
    let started = 0n;
    let startedCpu = 0;
    before(() => {
      started = process.hrtime.bigint();
      startedCpu = cpuSeconds() ?? 0;
    });
    await import(pathToFileURL(path.resolve(file)).href);
    // Registered after the file's own hooks, so it runs after them: the file's time includes its teardown.
    after(() => {
      const cpu = cpuSeconds();
      fileUsage.set(file, {
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        cpuSeconds: cpu === null ? null : cpu - startedCpu,
      });
    });
  });
}

/** The next file the runner gives, or null when there is none. */
function nextFile() {
  return new Promise((resolve) => {
    process.once('message', (message) => resolve(message?.file ?? null));
    process.send({ next: true });
  });
}

async function main() {
  const named = process.argv.slice(2);
  if (named.length > 0) {
    for (const file of named) await runFile(file);
    return;
  }
  for (let file = await nextFile(); file !== null; file = await nextFile()) await runFile(file);
  process.disconnect();
}

// Not a top-level await: each file's suite runs as declared, with no module of the process still loading.
void main();
