// @runs-alone real sockets against real time-outs: /healthz must answer within a second beside 200 stalled clients
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { freshDatabase, type TestDatabase } from '../support/databases.js';
import { forEachDatabase } from '../support/each-database.js';
import { RawConnection, type RawAnswer } from '../support/raw-http.js';
import { kill, startServerChild, type ChildService } from '../webhooks/processes.js';

/**
 * Contract 6, issue 10 item 1: slow and stalled clients are cut off in time, open connections are capped, and
 * idle clients hold no database connection. A real server process and real sockets, bounded in count and time.
 */
const headersTimeoutMs = 1500;
const requestTimeoutMs = 3000;
const maxConnections = 230;
const slack = 1500;

forEachDatabase('slow clients', (kind) => {
  let db: TestDatabase;
  let server: ChildService & { url: string };
  let port = 0;
  before(async () => {
    db = await freshDatabase(kind);
    server = await startServerChild({
      ...db.env,
      HEADERS_TIMEOUT_MS: String(headersTimeoutMs),
      REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
      MAX_CONNECTIONS: String(maxConnections),
      // Two connections to PostgreSQL: 200 idle clients must not need any of them.
      DATABASE_POOL_SIZE: '2',
    });
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    await kill(server, 'SIGTERM');
    await db.drop();
  });

  async function get(path: string): Promise<RawAnswer> {
    const c = new RawConnection(port);
    await c.connected;
    c.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    const answer = await c.response(2000);
    c.close();
    return answer;
  }

  async function open(count: number, request: string): Promise<RawConnection[]> {
    const sockets = Array.from({ length: count }, () => new RawConnection(port));
    await Promise.all(sockets.map((s) => s.connected));
    for (const s of sockets) s.write(request);
    return sockets;
  }

  it('cuts off 200 stalled clients with 408 in time, caps connections, and keeps /healthz and /readyz answering', async () => {
    const started = Date.now();
    // 100 clients that never finish their headers, 100 that send 11 of the 1000 body bytes they announce.
    const slowHeaders = await open(100, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const slowBodies = await open(
      100,
      'POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
        'Content-Length: 1000\r\n\r\ngrant_type=',
    );
    await new Promise((r) => setTimeout(r, 200));

    // Within the cap, the process and the database still answer at once.
    const t0 = Date.now();
    const health = await get('/healthz');
    assert.equal(health.status, 200, health.body);
    const ready = await get('/readyz');
    assert.equal(ready.status, 200, ready.body);
    assert.deepEqual(JSON.parse(ready.body), { status: 'ready' });
    assert.ok(Date.now() - t0 < 1000, `/healthz and /readyz took ${Date.now() - t0} ms`);

    // 40 more connections than there is room for: those past MAX_CONNECTIONS are closed at once, unanswered.
    const extra = Array.from({ length: 40 }, () => new RawConnection(port));
    await Promise.all(extra.map((s) => s.connected.catch(() => undefined)));
    await new Promise((r) => setTimeout(r, 500));
    const refused = extra.filter((s) => s.isClosed && s.received() === '');
    const stalled = [...slowHeaders, ...slowBodies];
    assert.ok(refused.length >= 240 - maxConnections, `${refused.length} of 40 refused`);
    assert.ok(refused.length <= 40);
    assert.ok(Date.now() - started < headersTimeoutMs, 'the refusals came before any time-out');
    assert.equal(stalled.filter((s) => s.isClosed).length, 0, 'the stalled clients within the cap are still connected');
    for (const s of extra) s.close();
    await new Promise((r) => setTimeout(r, 100));
    const healthAgain = await get('/healthz');
    assert.equal(healthAgain.status, 200, 'a connection within the cap is answered');

    // Every stalled client is answered 408 REQUEST_TIMEOUT (or closed) within its time-out.
    const answers = await Promise.all(stalled.map((s) => s.answer(requestTimeoutMs + slack * 2)));
    answers.forEach((a, i) => {
      const limit = (i < 100 ? headersTimeoutMs : requestTimeoutMs) + slack;
      assert.ok(a.closed, `client ${i} still connected after ${a.closedAfterMs} ms`);
      assert.ok(a.closedAfterMs < limit, `client ${i} cut off after ${a.closedAfterMs} ms (limit ${limit})`);
      if (a.status !== null) {
        assert.equal(a.status, 408);
        assert.deepEqual(JSON.parse(a.body), {
          status: false,
          message: 'The request was not received in time',
          error: { code: 'REQUEST_TIMEOUT' },
        });
      }
    });
    assert.ok(answers.filter((a) => a.status === 408).length >= 190, 'nearly all are told 408, not just dropped');
    for (const s of stalled) s.close();

    const readyAfter = await get('/readyz');
    assert.equal(readyAfter.status, 200);
  });
});
