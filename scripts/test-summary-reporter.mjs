import fs from 'node:fs';

/**
 * A node:test reporter for one process of scripts/run-tests.ts (scripts/test-batch.mjs, whose top-level suites
 * are test files): it writes, as one JSON line, each file's counts, tallied as node's runner tallies its own
 * (tests, suites, pass, fail, cancelled, skipped, todo), whether the file's suite passed, the time and processor
 * time the file's tests took, and the processor time of the whole process and the processes it started and
 * waited for (servers, CLIs, peers, browsers); and, over the IPC channel when there is one, each file's result as it
 * ends.
 */
export default async function* summary(source) {
  const files = {};
  let counts = emptyCounts();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, name, details } = event.data;
    // A suite's result comes after its tests' results: everything since the last file belongs to this one.
    if (nesting === 0) {
      files[name] = { counts, ok: event.type === 'test:pass', seconds: details.duration_ms / 1000, cpuSeconds: null, ...fileUsage.get(name) };
      // The runner prints each file's line as it ends, not only when its process does.
      if (process.connected) process.send({ file: name, result: files[name] });
      counts = emptyCounts();
      continue;
    }
    tally(counts, event);
  }
  yield `${JSON.stringify({ files, cpuSeconds: cpuSeconds() })}\n`;
}

function emptyCounts() {
  return { tests: 0, suites: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
}

/** The failures node counts as cancelled rather than failed: the test was stopped, not disproved. */
const cancelledBy = new Set(['cancelledByParent', 'testTimeoutFailure']);

/** As node's own runner counts a finished test or suite (lib/internal/test_runner/test.js, countCompletedTest). */
function tally(counts, { type, data }) {
  if (data.details.type === 'suite') {
    counts.suites += 1;
    return;
  }
  counts.tests += 1;
  if (data.skip !== undefined && data.skip !== false) counts.skipped += 1;
  else if (data.todo !== undefined && data.todo !== false) counts.todo += 1;
  else if (type === 'test:fail' && cancelledBy.has(data.details.error?.failureType)) counts.cancelled += 1;
  else if (type === 'test:fail') counts.fail += 1;
  else counts.pass += 1;
}

/** Each file's own time and processor time, as scripts/test-batch.mjs measured them around its tests. */
export const fileUsage = new Map();

/** utime + stime + cutime + cstime of /proc/self/stat, in seconds (Linux's USER_HZ is 100); null elsewhere. */
export function cpuSeconds() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
  } catch {
    return null;
  }
}
