import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OtpConnectionError, type RetryNotice } from '../../client/src/index.js';
import { freshNumber, rejection, startClientTestService, type ClientTestService } from './service.js';

/**
 * Nothing the typed client does hangs: an attempt that gets no answer within `timeoutMs` is given up, and only
 * requests that do nothing twice are sent again (reads, creates with an Idempotency-Key; never a create
 * without one, a verify or a resend). The service sits behind a proxy on 127.0.0.1 that passes the token
 * endpoint through and holds every /v1 request unanswered, as a hung load balancer would.
 */
describe('typed client when the service does not answer', () => {
  let s: ClientTestService;
  let proxy: http.Server;
  let proxyUrl: string;
  /** /v1 requests the proxy held, by method and path. */
  const held: string[] = [];

  before(async () => {
    s = await startClientTestService('pglite');
    proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url !== '/oauth2/token') {
          held.push(`${req.method} ${req.url}`);
          return;
        }
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type']) {
          const value = req.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        fetch(`${s.url}${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) })
          .then(async (answer) => res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(await answer.text()))
          .catch(() => res.destroy());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  after(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await s?.close();
  });

  it('gives up each attempt after timeoutMs, retrying reads and keyed creates only', async () => {
    const credentials = await s.register();
    const notices: RetryNotice[] = [];
    // The token request passes through unbounded: on a busy machine the service may take longer than the 300 ms
    // of these attempts to answer it, and what is measured here is the held /v1 requests alone.
    const fetchTokenUnbounded: typeof fetch = (url, init) =>
      fetch(url, String(url).endsWith('/oauth2/token') ? { ...init, signal: null } : init);
    const client = s.client(credentials, {
      baseUrl: proxyUrl,
      timeoutMs: 300,
      maxRetries: 2,
      onRetry: (n) => notices.push(n),
      fetch: fetchTokenUnbounded,
    });
    const id = crypto.randomUUID();
    const body = { countryCode: '+234', phoneNumber: freshNumber() };
    const cases = [
      { call: () => client.getVerification(id), sent: [`GET /v1/otp/${id}`, 3] },
      { call: () => client.createVerification(body, { idempotencyKey: 'k-1' }), sent: ['POST /v1/otp/request', 3] },
      { call: () => client.createVerification(body), sent: ['POST /v1/otp/request', 1] },
      { call: () => client.verify(id, '123456'), sent: ['POST /v1/otp/verify', 1] },
      { call: () => client.resend(id), sent: [`POST /v1/otp/${id}/resend`, 1] },
    ] as const;
    for (const { call, sent } of cases) {
      held.length = 0;
      notices.length = 0;
      const started = Date.now();
      const err = await rejection(call);
      const took = Date.now() - started;
      assert.ok(err instanceof OtpConnectionError, String(err));
      assert.equal(err.timedOut, true);
      assert.deepEqual(held, Array.from({ length: sent[1] }, () => sent[0]));
      assert.deepEqual(
        notices.map((n) => n.reason),
        Array.from({ length: sent[1] - 1 }, () => 'connection'),
      );
      // Each attempt 300 ms, the backoffs between them (at most 250 and 500 ms), and slack for a busy machine.
      assert.ok(took >= 300 * sent[1] - 20 && took < 300 * sent[1] + 750 + 3000, `${sent[0]} took ${took} ms`);
    }
  });

  it('gives up on a service that refuses connections after the retries allowed', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const notices: RetryNotice[] = [];
    const client = s.client(await s.register(), { baseUrl: `http://127.0.0.1:${port}`, maxRetries: 2, onRetry: (n) => notices.push(n) });
    const err = await rejection(() => client.getVerification(crypto.randomUUID()));
    assert.ok(err instanceof OtpConnectionError, String(err));
    assert.equal(err.timedOut, false);
    // The token request is the first to fail: it changes nothing, so it is retried.
    assert.deepEqual(
      notices.map((n) => [n.reason, new URL(n.url).pathname]),
      [
        ['connection', '/oauth2/token'],
        ['connection', '/oauth2/token'],
      ],
    );
  });
});
