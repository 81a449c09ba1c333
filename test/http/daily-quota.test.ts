import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/server.js';
import { e164Of, expectV1Error, nextLocalNumber } from '../support/api.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';

const limit = 5;

/** Contract 6: CLIENT_DAILY_SEND_LIMIT, exact under concurrency and, on PostgreSQL, across instances. */
forEachDatabase('daily send quota', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      clock: new TestClock(Date.parse('2026-11-21T21:00:00.000Z')),
      env: { CLIENT_DAILY_SEND_LIMIT: String(limit) },
    });
  });
  after(() => h.close());

  const create = (app: typeof h.app, token: string, phoneNumber = nextLocalNumber()) =>
    app.inject({ method: 'POST', url: '/v1/otp/request', headers: { authorization: `Bearer ${token}` }, payload: { countryCode: '+234', phoneNumber } });

  it('refuses the client past its quota with 429 and Retry-After to the next UTC midnight; test numbers and other clients do not count', async () => {
    const c = await h.client();
    const token = await h.token(undefined, c);
    const test = nextLocalNumber();
    const added = await runAdminCommand(adminDeps(h.services), { name: 'clients.test-numbers.add', id: c.clientId, number: e164Of(test), code: '123456' });
    assert.ok(added.ok);
    for (let i = 0; i < limit; i += 1) assert.equal((await create(h.app, token)).statusCode, 200);
    const refused = await create(h.app, token);
    expectV1Error(refused, 429, 'RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], String(3 * 3600));
    assert.equal((await create(h.app, token, test)).statusCode, 200, 'a test number is never limited');
    assert.equal((await create(h.app, await h.token())).statusCode, 200, 'another client has its own quota');
    h.clock.advance(3 * 3600 * 1000);
    // A new token: the first one has expired meanwhile.
    assert.equal((await create(h.app, await h.token(undefined, c))).statusCode, 200, 'a new UTC day, a new quota');
  });

  it('counts resends as sends: a resend past the quota is refused, and a create after resends too', async () => {
    const c = await h.client();
    const token = await h.token(undefined, c);
    const made = [];
    for (let i = 0; i < 2; i += 1) made.push((await create(h.app, token)).json() as { data: { id: string } });
    h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
    for (const v of made) assert.equal((await h.call('POST', `/v1/otp/${v.data.id}/resend`, token)).statusCode, 200);
    assert.equal((await create(h.app, token)).statusCode, 200, 'the fifth send');
    h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
    const resend = await h.call('POST', `/v1/otp/${made[0]?.data.id}/resend`, token);
    expectV1Error(resend, 429, 'RATE_LIMITED');
    assert.match((resend.json() as { message: string }).message, /CLIENT_DAILY_SEND_LIMIT/);
    expectV1Error(await create(h.app, token), 429, 'RATE_LIMITED');
  });

  it(`admits exactly ${limit} of 16 simultaneous creates of one client`, async () => {
    const token = await h.token();
    const answers = await Promise.all(Array.from({ length: 16 }, () => create(h.app, token)));
    assert.equal(answers.filter((r) => r.statusCode === 200).length, limit);
    for (const r of answers.filter((x) => x.statusCode !== 200)) expectV1Error(r, 429, 'RATE_LIMITED');
  });

  it(
    `admits exactly ${limit} of 16 simultaneous creates of one client across two instances`,
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      await withSecondInstance(h, { CLIENT_DAILY_SEND_LIMIT: String(limit) }, async (other) => {
        const token = await h.token();
        const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => create(i % 2 === 0 ? h.app : other.app, token)));
        assert.equal(answers.filter((r) => r.statusCode === 200).length, limit, answers.map((r) => r.statusCode).join(','));
        for (const r of answers.filter((x) => x.statusCode !== 200)) expectV1Error(r, 429, 'RATE_LIMITED');
      });
    },
  );
});
