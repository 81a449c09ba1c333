import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
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

  it('refuses with a message that names the setting and how to raise it', async () => {
    const token = await h.token();
    for (let i = 0; i < limit; i += 1) assert.equal((await create(h.app, token)).statusCode, 200);
    const refused = await create(h.app, token);
    expectV1Error(refused, 429, 'RATE_LIMITED');
    const { message } = refused.json() as { message: string };
    assert.match(message, /CLIENT_DAILY_SEND_LIMIT/);
    assert.match(message, /raise/);
    assert.match(message, /midnight UTC/);
  });

  it('gives a refused create\'s send back: it counts toward no limit', async () => {
    const token = await h.token();
    const number = nextLocalNumber();
    assert.equal((await create(h.app, token, number)).statusCode, 200);
    // The number's cool-down refuses it: no send was made, so the quota keeps its place.
    expectV1Error(await create(h.app, token, number), 429, 'RATE_LIMITED');
    for (let i = 1; i < limit; i += 1) assert.equal((await create(h.app, token)).statusCode, 200, `send ${i + 1} of ${limit}`);
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

  it(
    'claims a larger quota in shares across two instances: never past it, and exact once both have been refused',
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      // 250 a day in shares of 3 (a hundredth), claimed ahead as each instance spends them.
      const big = 250;
      await withSecondInstance(h, { CLIENT_DAILY_SEND_LIMIT: String(big) }, async (other) => {
        const c = await h.client();
        const token = await h.token(undefined, c);
        await withHarnessLimit(big, async (app) => {
          let admitted = 0;
          const refusedBy = new Set<string>();
          for (let round = 0; round < 40 && refusedBy.size < 2; round += 1) {
            const answers = await Promise.all(
              Array.from({ length: 16 }, (_, i) => create(i % 2 === 0 ? app : other.app, token).then((r) => ({ r, by: i % 2 === 0 ? 'first' : 'second' }))),
            );
            for (const { r, by } of answers) {
              if (r.statusCode === 200) admitted += 1;
              else {
                expectV1Error(r, 429, 'RATE_LIMITED');
                refusedBy.add(by);
              }
            }
            assert.ok(admitted <= big, `${admitted} admitted of ${big}`);
          }
          assert.equal(refusedBy.size, 2, 'both instances reached the quota');
          // Each instance was refused only when the store had nothing left to grant and it held nothing unused.
          assert.equal(admitted, big);
        });
      });
    },
  );

  /** The harness's own app with another CLIENT_DAILY_SEND_LIMIT: a third instance on the same database and clock. */
  async function withHarnessLimit(n: number, use: (app: typeof h.app) => Promise<void>): Promise<void> {
    await withSecondInstance(h, { CLIENT_DAILY_SEND_LIMIT: String(n) }, (third) => use(third.app));
  }
});

/** Contract 6 and issue 20: a new deployment has a daily quota without being told to. */
forEachDatabase('daily send quota by default', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  it('is on, at 10000 sends a client a day, and counts a create', async () => {
    assert.equal(h.config.CLIENT_DAILY_SEND_LIMIT, 10_000);
    const c = await h.client();
    const token = await h.token(undefined, c);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/otp/request',
      headers: { authorization: `Bearer ${token}` },
      payload: { countryCode: '+234', phoneNumber: nextLocalNumber() },
    });
    assert.equal(res.statusCode, 200);
    const day = h.clock.now().toISOString().slice(0, 10);
    const row = await h.services.db.db
      .selectFrom('client_daily_sends')
      .select('sends')
      .where('client_id', '=', c.clientId)
      .where(sql<boolean>`day = ${day}::date`)
      .executeTakeFirst();
    // The instance claimed its first share of the day (a hundredth of the quota) for this create and the next.
    assert.equal(row?.sends, 100);
  });
});
