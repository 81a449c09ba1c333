import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { createVerification, e164Of, expectV1Error, nextLocalNumber, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

interface Row {
  day: string;
  regionCode: string | null;
  countryCode: string;
  sends: number;
  delivered: number;
  verified: number;
  cost: string;
  costPerVerified: string | null;
}

const dayMs = 86_400_000;
const rowKeys = ['channel', 'cost', 'costPerVerified', 'countryCode', 'day', 'delivered', 'regionCode', 'sends', 'verified'];

/** The UTC day of a time, YYYY-MM-DD. */
const dayOf = (at: Date | number) => new Date(at).toISOString().slice(0, 10);

/** Contract 10: GET /v1/stats by outcome (its shared security cases are in security.test.ts with every route). */
forEachDatabase('traffic stats', (kind) => {
  let h: Harness;
  before(async () => {
    // No resend cool-down and no prefix limit: the tests make their traffic as fast as they like.
    h = await createHarness(kind, { env: { PHONE_COOLDOWN_SECONDS: '0', PREFIX_LIMIT_COUNT: '0' } });
  });
  after(() => h.close());

  /** A new client with both OTP scopes: its id, a token, and a way to get a new one once the clock has moved on. */
  const fresh = async () => {
    const c = await h.client(['otp:send', 'otp:verify']);
    const renew = () => h.token(['otp:send', 'otp:verify'], c);
    return { id: c.clientId, token: await renew(), renew };
  };

  /** The answer to GET /v1/stats with this query, which must be a 200 "Stats retrieved". */
  async function stats(token: string, query = ''): Promise<Row[]> {
    const res = await h.call('GET', `/v1/stats${query}`, token);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { status: boolean; message: string; data: Row[] };
    assert.deepEqual(Object.keys(body).sort(), ['data', 'message', 'status']);
    assert.equal(body.status, true);
    assert.equal(body.message, 'Stats retrieved');
    for (const row of body.data) assert.deepEqual(Object.keys(row).sort(), rowKeys, 'exactly the contract fields');
    return body.data;
  }

  /** Marks a verification's latest send DELIVERED, as a provider's receipt does. */
  async function deliver(v: RecordBody): Promise<void> {
    await h.services.sendWorker.idle();
    const sent = await h.services.db.db
      .selectFrom('provider_messages')
      .select(['provider', 'message_id'])
      .where('verification_id', '=', v.id)
      .executeTakeFirstOrThrow();
    const outcome = await h.services.deliveries.recordReceipt(sent.provider, { messageId: sent.message_id, status: 'DELIVERED', detail: null, at: null });
    assert.equal(outcome, 'recorded');
  }

  const verify = async (token: string, v: RecordBody, otp = v.otp) => (await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp })).statusCode;

  describe('happy', () => {
    it("counts the client's sends, deliveries and verifications per country, test numbers and other clients aside", async () => {
      const me = await fresh();
      const today = dayOf(h.clock.now());
      assert.deepEqual(await stats(me.token), [], 'no traffic, no rows');

      const [ng1, ng2, ng3] = [await createVerification(h, me.token), await createVerification(h, me.token), await createVerification(h, me.token)];
      const gh = await createVerification(h, me.token, { countryCode: '+233', phoneNumber: '0241234567' });
      const us = await createVerification(h, me.token, { countryCode: '+1', phoneNumber: '2125550147' });
      assert.ok(ng1 && ng2 && ng3);
      assert.equal(await verify(me.token, ng1), 200);
      assert.equal(await verify(me.token, gh), 200);
      assert.equal(await verify(me.token, us, us.otp === '000000' ? '111111' : '000000'), 422, 'a wrong code verifies nothing');
      assert.equal((await h.call('POST', `/v1/otp/${ng2.id}/resend`, me.token)).statusCode, 200);
      await deliver(ng3);
      await deliver(ng1);

      // A test number's verifications reach no provider (they read DELIVERED) and count nowhere.
      const testLocal = nextLocalNumber();
      const added = await runAdminCommand(adminDeps(h.services), { name: 'clients.test-numbers.add', id: me.id, number: e164Of(testLocal), code: '123456' });
      assert.ok(added.ok);
      const t = await createVerification(h, me.token, { phoneNumber: testLocal });
      assert.equal(await verify(me.token, t, '123456'), 200);
      // Another client's traffic is its own.
      const other = await fresh();
      const theirs = await createVerification(h, other.token);
      assert.equal(await verify(other.token, theirs), 200);

      assert.deepEqual(await stats(me.token), [
        { day: today, regionCode: 'GH', countryCode: '+233', channel: 'SMS', sends: 1, delivered: 0, verified: 1, cost: '0', costPerVerified: '0' },
        { day: today, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 4, delivered: 2, verified: 1, cost: '0', costPerVerified: '0' },
        { day: today, regionCode: 'US', countryCode: '+1', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null },
      ]);
      assert.deepEqual(await stats(other.token), [{ day: today, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 1, delivered: 0, verified: 1, cost: '0', costPerVerified: '0' }]);
    });

    it('answers a token with either OTP scope', async () => {
      for (const scope of ['otp:send', 'otp:verify'] as const) {
        const c = await h.client(['otp:send', 'otp:verify']);
        await createVerification(h, await h.token(['otp:send'], c));
        const rows = await stats(await h.token([scope], c));
        assert.deepEqual(rows.map((r) => [r.regionCode, r.sends]), [['NG', 1]], scope);
      }
    });

    it('groups by UTC day, shows the last 7 days by default, and any range asked for', async () => {
      // 23:59:59.999 UTC of the current day, then midnight: two days.
      const now = h.clock.now().getTime();
      h.clock.advance(Math.ceil((now + 1) / dayMs) * dayMs - 1 - now);
      const me = await fresh();
      const first = dayOf(h.clock.now());
      await createVerification(h, me.token);
      h.clock.advance(1);
      const second = dayOf(h.clock.now());
      await createVerification(h, me.token);
      await createVerification(h, me.token, { countryCode: '+233', phoneNumber: '0241234568' });
      assert.notEqual(first, second);

      const ng = (day: string, sends: number) => ({ day, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends, delivered: 0, verified: 0, cost: '0', costPerVerified: null });
      const gh = { day: second, regionCode: 'GH', countryCode: '+233', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null };
      assert.deepEqual(await stats(me.token), [ng(first, 1), gh, ng(second, 1)], 'ordered by day, then region');
      assert.deepEqual(await stats(me.token, `?from=${first}&to=${first}`), [ng(first, 1)]);
      assert.deepEqual(await stats(me.token, `?from=${second}`), [gh, ng(second, 1)]);
      assert.deepEqual(await stats(me.token, `?to=${first}`), [ng(first, 1)]);

      // Six days after `first` it is the first of the 7 days shown; a day later it is not.
      h.clock.advance(5 * dayMs);
      assert.deepEqual(await stats(await me.renew()), [ng(first, 1), gh, ng(second, 1)]);
      h.clock.advance(dayMs);
      const token = await me.renew();
      assert.deepEqual(await stats(token), [gh, ng(second, 1)]);
      assert.deepEqual(await stats(token, `?from=${first}`), [ng(first, 1), gh, ng(second, 1)]);
      // 366 days, both included, is the most asked at once.
      const longest = dayOf(Date.parse(`${second}T00:00:00Z`) - 365 * dayMs);
      assert.deepEqual(await stats(token, `?from=${longest}&to=${second}`), [ng(first, 1), gh, ng(second, 1)]);
      // Unknown parameters are ignored, as unknown fields are.
      assert.deepEqual(await stats(token, `?from=${second}&page=2`), [gh, ng(second, 1)]);
    });

    it('counts verifications made before regions were stored under the region their calling code names, or null', async () => {
      const me = await fresh();
      const today = dayOf(h.clock.now());
      const ng = await createVerification(h, me.token);
      await createVerification(h, me.token);
      const us = await createVerification(h, me.token, { countryCode: '+1', phoneNumber: '2125550148' });
      const gb = await createVerification(h, me.token, { countryCode: '+44', phoneNumber: '07400123458' });
      await h.services.db.db.updateTable('verifications').set({ region_code: null }).where('id', 'in', [ng.id, us.id, gb.id]).execute();
      assert.deepEqual(await stats(me.token), [
        // +234 is Nigeria's alone: the old row joins the new one.
        { day: today, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 2, delivered: 0, verified: 0, cost: '0', costPerVerified: null },
        // +1 and +44 are shared by several regions: which one is not read number by number.
        { day: today, regionCode: null, countryCode: '+1', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null },
        { day: today, regionCode: null, countryCode: '+44', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null },
      ]);
    });
  });

  describe('errors', () => {
    it('refuses a day that is not a calendar day, from after to, and more than 366 days with 400 VALIDATION_ERROR', async () => {
      const me = await fresh();
      for (const [query, field] of [
        ['?from=2026-02-30', 'from'],
        ['?to=2026-13-01', 'to'],
        ['?from=26-11-01', 'from'],
        ['?from=yesterday', 'from'],
        ['?to=2026-11-21T00:00:00Z', 'to'],
        ['?from=', 'from'],
        ['?from=2026-11-10&to=2026-11-09', 'from'],
        ['?from=2025-11-20&to=2026-11-21', 'from'],
        ['?from=2026-11-01&from=2026-11-02', 'from'],
        // Year 0000: the embedded database cannot take it (it was a 500 there).
        ['?from=0000-01-01', 'from'],
        ['?from=0000-12-31&to=0001-01-01', 'from'],
        ['?to=0000-01-01', 'to'],
      ] as const) {
        const body = expectV1Error(await h.call('GET', `/v1/stats${query}`, me.token), 400, 'VALIDATION_ERROR');
        assert.deepEqual(body.error.details?.map((d) => d.field), [field], query);
      }
      // A leap year's 366 days are not too many.
      assert.deepEqual(await stats(me.token, '?from=2028-01-01&to=2028-12-31'), []);
      // The first day of the calendar, named or reached by the default range, is read.
      assert.deepEqual(await stats(me.token, '?from=0001-01-01&to=0001-01-02'), []);
      assert.deepEqual(await stats(me.token, '?to=0001-01-03'), []);
    });

    it('answers no token with 401 and a token without an OTP scope with 403', async () => {
      expectV1Error(await h.call('GET', '/v1/stats', null), 401, 'UNAUTHORIZED');
      const lookups = await h.token(['lookup:request', 'lookup:status'], await h.client(['lookup:request', 'lookup:status']));
      const res = await h.call('GET', '/v1/stats', lookups);
      expectV1Error(res, 403, 'INSUFFICIENT_SCOPE');
      assert.equal(res.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="otp:send otp:verify"');
    });
  });

  describe('the operator command', () => {
    it("shows every client's rows naming the client, or one client's, and refuses an unknown client or a bad day", async () => {
      const a = await fresh();
      const b = await fresh();
      await createVerification(h, a.token);
      await createVerification(h, b.token);
      const today = dayOf(h.clock.now());
      const run = (command: { clientId: string | null; from?: string; to?: string }) =>
        runAdminCommand(adminDeps(h.services), { name: 'stats', from: null, to: null, ...command });

      const all = await run({ clientId: null });
      assert.ok(all.ok);
      const { from, to, rows } = all.value as { from: string; to: string; rows: (Row & { clientId: string })[] };
      assert.deepEqual([from, to], [dayOf(Date.parse(`${today}T00:00:00Z`) - 6 * dayMs), today]);
      for (const c of [a, b]) {
        assert.deepEqual(
          rows.filter((r) => r.clientId === c.id),
          [{ clientId: c.id, day: today, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null }],
        );
      }
      const one = await run({ clientId: a.id, from: today });
      assert.ok(one.ok);
      assert.deepEqual(one.value, { from: today, to: today, rows: [{ day: today, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null }] });

      assert.deepEqual(await run({ clientId: '00000000-0000-4000-8000-000000000000' }), { ok: false, error: 'no client 00000000-0000-4000-8000-000000000000' });
      const bad = await run({ clientId: null, from: '2026-02-30' });
      assert.equal(bad.ok, false);
      assert.match(bad.ok ? '' : bad.error, /^--from must be a calendar day, YYYY-MM-DD$/);
    });
  });
});
