import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createHarness, type Harness } from '../support/harness.js';
import { RawConnection, rawExchange, type RawAnswer } from '../support/raw-http.js';

/**
 * Contract 5: the HTTP server's own refusals (before any route runs) answer in the one error shape, and
 * contract 6: a client that does not send its request in time gets 408. Real sockets on a listening server.
 */
let h: Harness;
let port = 0;
before(async () => {
  h = await createHarness('pglite', { env: { HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '600' } });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  port = address.port;
});
after(() => h.close());

function expectRefusal(answer: RawAnswer, status: number, code: string): void {
  assert.equal(answer.status, status, answer.body);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(answer.body) as { status: boolean; message: string; error: { code: string } };
  assert.equal(body.status, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.deepEqual(body.error, { code });
  assert.ok(answer.closed, 'the connection is closed after the refusal');
}

it('answers headers over the limit with 431 HEADERS_TOO_LARGE', async () => {
  const answer = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  expectRefusal(answer, 431, 'HEADERS_TOO_LARGE');
});

it('answers a malformed request line with 400 BAD_REQUEST', async () => {
  expectRefusal(await rawExchange(port, 'HELLO THERE\r\n\r\n'), 400, 'BAD_REQUEST');
  expectRefusal(await rawExchange(port, 'GET /healthz HTTP/1.1 extra\r\nHost: x\r\n\r\n'), 400, 'BAD_REQUEST');
});

it('answers Content-Length with Transfer-Encoding with 400 BAD_REQUEST, on the token endpoint too', async () => {
  const answer = await rawExchange(
    port,
    'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
      'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  );
  expectRefusal(answer, 400, 'BAD_REQUEST');
});

it('answers a body that stops short of its Content-Length with 408 REQUEST_TIMEOUT within REQUEST_TIMEOUT_MS', async () => {
  const c = new RawConnection(port);
  await c.connected;
  c.write(
    'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
      'Content-Length: 1000\r\n\r\ngrant_type=',
  );
  const answer = await c.answer(5000);
  c.close();
  expectRefusal(answer, 408, 'REQUEST_TIMEOUT');
  // REQUEST_TIMEOUT_MS plus the server's check interval (a quarter of HEADERS_TIMEOUT_MS here) and some slack.
  assert.ok(answer.closedAfterMs < 600 + 75 + 500, `closed after ${answer.closedAfterMs} ms`);
});

it('answers headers that never end with 408 REQUEST_TIMEOUT within HEADERS_TIMEOUT_MS', async () => {
  const c = new RawConnection(port);
  await c.connected;
  c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  const answer = await c.answer(5000);
  c.close();
  expectRefusal(answer, 408, 'REQUEST_TIMEOUT');
  assert.ok(answer.closedAfterMs < 300 + 75 + 500, `closed after ${answer.closedAfterMs} ms`);
});

it('still answers a well-formed request on the same server', async () => {
  const c = new RawConnection(port);
  await c.connected;
  c.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  const answer = await c.response(2000);
  c.close();
  assert.equal(answer.status, 200);
  assert.deepEqual(JSON.parse(answer.body), { status: 'ok' });
});
