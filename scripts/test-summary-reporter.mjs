import fs from 'node:fs';

/**
 * A node:test reporter for one test file run by scripts/run-tests.ts: it writes, as one JSON line, the counts
 * node's runner itself states at the end (tests, suites, pass, fail, cancelled, skipped, todo), so the runner adds
 * up the files' counts exactly as `node --test` would have counted them, and the processor time the file's
 * process and the processes it started and waited for (servers, CLIs, peers, browsers) used.
 */
export default async function* summary(source) {
  const counts = {};
  for await (const event of source) {
    if (event.type !== 'test:diagnostic' || event.data.nesting !== 0) continue;
    const match = /^(tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(event.data.message);
    if (match) counts[match[1]] = Number(match[2]);
  }
  yield `${JSON.stringify({ ...counts, cpuSeconds: cpuSeconds() })}\n`;
}

/** utime + stime + cutime + cstime of /proc/self/stat, in seconds (Linux's USER_HZ is 100); null elsewhere. */
function cpuSeconds() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
  } catch {
    return null;
  }
}
