import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { knownScopes } from '../../src/domain/scopes.js';
import { openDatabase } from '../../src/store/database.js';
import { startServer } from '../../src/server.js';
import { createVerification, expectV1Error, nextLocalNumber, settlesWithin } from '../support/api.js';
import { createHarness, type Harness } from '../support/harness.js';
import { embeddedDataDir } from '../support/databases.js';


/**
 * The embedded database works in a worker thread of its own (issue 22): its statements do not stop the event
 * loop, so requests that need no database answer while one runs, and a thread that dies is answered 503, never a
 * hang. Embedded only: PostgreSQL has always worked in processes of its own.
 */
describe('embedded database off the event loop [pglite]', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness('pglite', { env: { DATABASE_TIMEOUT_MS: '60000' } });
  });
  after(() => h.close());
  const create = (token: string) => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber() });

  it('answers /healthz and a token request while a slow statement runs in the database', async () => {
    const client = await h.client();
    await h.token(undefined, client);
    let slowDone = false;
    // Far longer than the requests below take even on a busy machine; only their order is asserted.
    const slow = sql`SELECT pg_sleep(8)`.execute(h.services.db.db).then(() => (slowDone = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const health = await h.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
    assert.equal(slowDone, false, '/healthz waited for the slow statement');
    const token = await h.token(undefined, client);
    assert.ok(token);
    assert.equal(slowDone, false, 'the token request waited for the slow statement');
    await slow;
  });

  it('answers 503 UNAVAILABLE, not a hang, when the thread dies with a request in flight and after it', async () => {
    const token = await h.token();
    await createVerification(h, token);
    const thread = h.services.db.thread;
    assert.ok(thread);
    // The session is held by a statement in the thread; the create waits its turn, then the thread dies.
    const slow = sql`SELECT pg_sleep(30)`.execute(h.services.db.db).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const inFlight = create(token);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await thread.kill();
    const res = await settlesWithin(inFlight, 10_000, 'the request in flight');
    expectV1Error(res, 503, 'UNAVAILABLE');
    assert.ok(res.headers['retry-after']);
    await slow;
    const later = await settlesWithin(create(token), 10_000, 'a later request');
    expectV1Error(later, 503, 'UNAVAILABLE');
    const ready = await settlesWithin(h.app.inject({ method: 'GET', url: '/readyz' }), 10_000, '/readyz');
    assert.equal(ready.statusCode, 503);
    const lost = await settlesWithin(h.services.db.lost, 5_000, 'lost');
    assert.ok(lost instanceof Error);
  });
});

describe('shutdown on the embedded database [pglite]', () => {
  const dir = embeddedDataDir('otp-embedded-');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('answers a create in flight 200 and commits it before the database closes', async () => {
    const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', CLIENT_RATE_LIMIT_PER_SECOND: '0' });
    const server = await startServer(config, { logger: pino({ level: 'silent' }), print: () => undefined });
    let closed = false;
    try {
      const client = await server.services.clients.create('drain', knownScopes);
      const tokenRes = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope: 'otp:send' }),
      });
      const { accessToken } = (await tokenRes.json()) as { accessToken: string };
      // The session is held, so the create is still waiting for it when the shutdown begins.
      const slow = sql`SELECT pg_sleep(2)`.execute(server.services.db.db);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const create = fetch(`${server.url}/v1/otp/request`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ countryCode: '+234', phoneNumber: nextLocalNumber() }),
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const closing = server.close().then(() => (closed = true));
      const res = await create;
      assert.equal(res.status, 200, await res.clone().text());
      const { data } = (await res.json()) as { data: { id: string } };
      await slow;
      await closing;

      const again = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, timeoutMs: 60_000 });
      try {
        const row = await again.db.selectFrom('verifications').select('id').where('id', '=', data.id).executeTakeFirst();
        assert.equal(row?.id, data.id, 'the create answered 200 was committed');
      } finally {
        await again.close();
      }
    } finally {
      if (!closed) await server.close().catch(() => undefined);
    }
  });
});
