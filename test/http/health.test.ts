import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { assertNoLeak, expectV1Error, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Contract 7 (health) and 5 (500 INTERNAL_ERROR): what answers when the database goes away. */
forEachDatabase('health', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  // The last test closed the database already; the embedded one refuses a second close.
  after(() => h.close().catch((err: unknown) => assert.match(String(err), /PGlite is closed/)));

  it('answers GET / with where to go: the API reference, the health checks, the inbox that is on, not the console that is off', async () => {
    const index = await h.app.inject({ method: 'GET', url: '/' });
    assert.equal(index.statusCode, 200);
    assert.deepEqual(index.json(), { service: 'otp-service', docs: '/docs', openapi: '/openapi.json', health: '/healthz', ready: '/readyz', devInbox: '/dev/inbox' });
  });

  it('answers /healthz and /readyz with 200 while the database is up', async () => {
    const health = await h.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json(), { status: 'ok' });
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ready' });
  });

  it('answers /readyz with 503 once the database is gone, /healthz still 200, and unexpected errors as a bare 500', async () => {
    const token = await h.token(['otp:send']);
    const c = await h.client(['otp:send']);
    await h.services.db.close();

    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503);
    assert.deepEqual(ready.json(), { status: 'unavailable' });
    assert.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);

    const create = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber() });
    const body = expectV1Error(create, 500, 'INTERNAL_ERROR');
    assert.equal(body.message, 'Internal error');
    assert.ok(create.headers['x-request-id']);

    const issued = await h.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret },
    });
    assert.equal(issued.statusCode, 500);
    assert.deepEqual(issued.json(), { error: 'server_error', error_description: 'Internal error' });
    assertNoLeak(issued.body);
  });
});
