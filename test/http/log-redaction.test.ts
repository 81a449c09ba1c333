import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, it } from 'node:test';
import { buildApp } from '../../src/http/app.js';
import { loggableUrl } from '../../src/http/log-redaction.js';
import { createLogger } from '../../src/logger.js';
import { appDeps } from '../../src/server.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Secrets in a URL never reach the log: query strings (contract 7) and callback paths that end with a secret (8). */
let h: Harness;
before(async () => {
  h = await createHarness('pglite');
});
after(() => h.close());

it('cuts query strings and callback path secrets out of logged URLs', () => {
  assert.equal(loggableUrl('/v1/otp/abc?access_token=s3cret'), '/v1/otp/abc?[redacted]');
  assert.equal(loggableUrl('/callbacks/infobip/0123456789abcdef0123456789abcdef'), '/callbacks/infobip/[redacted]');
  assert.equal(loggableUrl('/callbacks/twilio'), '/callbacks/twilio');
  assert.equal(loggableUrl('/oauth/token'), '/oauth/token');
});

it('logs requests without the secrets their URLs carried', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const app = await buildApp({ ...appDeps(h.services), logger: createLogger('info', sink) });
  try {
    await app.inject({ method: 'GET', url: '/v1/otp/6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a?access_token=tok-in-query' });
    await app.inject({ method: 'POST', url: '/oauth/token?client_secret=secret-in-query', payload: {} });
    await app.inject({ method: 'POST', url: '/callbacks/infobip/path-secret-0123456789abcdef0123', payload: '{}' });
  } finally {
    await app.close();
  }
  const log = lines.join('');
  assert.ok(log.includes('incoming request'), 'requests are logged');
  for (const secret of ['tok-in-query', 'secret-in-query', 'path-secret-0123456789abcdef0123']) assert.ok(!log.includes(secret), secret);
  assert.ok(log.includes('/callbacks/infobip/[redacted]'));
});
