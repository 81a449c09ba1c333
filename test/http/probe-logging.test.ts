import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/logger.js';
import { appDeps } from '../../src/server.js';
import { createHarness } from '../support/harness.js';

interface LogLine {
  level: number;
  msg: string;
  req?: { url?: string };
}

async function logLinesOf(level: string, urls: readonly string[]): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as LogLine);
      done();
    },
  });
  const h = await createHarness('pglite');
  const app = await buildApp({ ...appDeps(h.services), logger: createLogger(level, sink) });
  try {
    for (const url of urls) await app.inject({ method: 'GET', url });
  } finally {
    await app.close();
    await h.close();
  }
  return lines;
}

describe('request logs of the health probes', () => {
  it('leaves /healthz and /readyz out at info, and logs other requests', async () => {
    const lines = await logLinesOf('info', ['/healthz', '/readyz?full=1', '/openapi-not-here']);
    const incoming = lines.filter((l) => l.msg === 'incoming request').map((l) => l.req?.url);
    assert.deepEqual(incoming, ['/openapi-not-here']);
    assert.equal(lines.filter((l) => l.msg === 'request completed').length, 1);
  });

  it('logs them at debug', async () => {
    const lines = await logLinesOf('debug', ['/healthz']);
    const probe = lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed');
    assert.equal(probe.length, 2);
    assert.ok(probe.every((l) => l.level === 20), JSON.stringify(probe));
  });
});
