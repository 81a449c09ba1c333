import assert from 'node:assert/strict';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { cryptoRandom } from '../../src/domain/random.js';
import { buildApp } from '../../src/http/app.js';
import { appDeps } from '../../src/server.js';
import { createServices } from '../../src/services.js';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { expectV1Error, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

function retryAfter(res: LightMyRequestResponse): number {
  const value = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(value) && value >= 1, `Retry-After: ${String(res.headers['retry-after'])}`);
  return value;
}

/** Contract 6: per-number and per-client limits, 429 RATE_LIMITED with Retry-After. */
forEachDatabase('limits', (kind) => {
  describe('per number cooldown and window, per client rate', () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(kind, {
        env: {
          PHONE_COOLDOWN_SECONDS: '30',
          PHONE_LIMIT_COUNT: '3',
          PHONE_LIMIT_WINDOW_SECONDS: '600',
          CLIENT_RATE_LIMIT_PER_SECOND: '3',
        },
      });
    });
    after(() => h.close());

    const create = (token: string, phoneNumber: string, extra: Record<string, unknown> = {}) =>
      h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber, ...extra });

    it('refuses a new verification of a number within PHONE_COOLDOWN_SECONDS, saying when to retry', async () => {
      const token = await h.token(['otp:send']);
      const phone = nextLocalNumber();
      assert.equal((await create(token, phone)).statusCode, 200);
      h.clock.advance(10_000);
      const limited = await create(token, phone, { type: 'DROPPED_CALL' });
      assert.deepEqual(expectV1Error(limited, 429, 'RATE_LIMITED').error.details, [{ factor: 'repeated_attempts', rule: 'phone', mode: 'enforce' }]);
      assert.equal(retryAfter(limited), 20);
      // The same number in another notation is the same number.
      expectV1Error(await create(token, phone.slice(1)), 429, 'RATE_LIMITED');
      h.clock.advance(20_000);
      assert.equal((await create(token, phone)).statusCode, 200, 'after the cooldown');
    });

    it('keeps limits per client and per number', async () => {
      const token = await h.token(['otp:send']);
      const phone = nextLocalNumber();
      assert.equal((await create(token, phone)).statusCode, 200);
      assert.equal((await create(token, nextLocalNumber())).statusCode, 200, 'another number');
      h.clock.advance(1000);
      assert.equal((await create(await h.token(['otp:send']), phone)).statusCode, 200, 'another client');
    });

    it('refuses more than PHONE_LIMIT_COUNT verifications of a number in PHONE_LIMIT_WINDOW_SECONDS', async () => {
      const token = await h.token(['otp:send']);
      const phone = nextLocalNumber();
      for (let i = 0; i < 3; i++) {
        assert.equal((await create(token, phone)).statusCode, 200, `verification ${i + 1}`);
        h.clock.advance(30_000);
      }
      const limited = await create(token, phone);
      expectV1Error(limited, 429, 'RATE_LIMITED');
      // The oldest of the three was 90 s ago; it leaves the window in 510 s.
      assert.equal(retryAfter(limited), 510);
      h.clock.advance(509_000);
      expectV1Error(await create(token, phone), 429, 'RATE_LIMITED');
      h.clock.advance(1_000);
      assert.equal((await create(token, phone)).statusCode, 200);
    });

    it('does not count refused requests against the number', async () => {
      const token = await h.token(['otp:send']);
      const phone = nextLocalNumber();
      assert.equal((await create(token, phone)).statusCode, 200);
      for (let i = 0; i < 3; i++) {
        h.clock.advance(1000);
        expectV1Error(await create(token, phone), 429, 'RATE_LIMITED');
      }
      h.clock.advance(30_000);
      assert.equal((await create(token, phone)).statusCode, 200);
    });

    it('keeps nothing of a refused request, its Idempotency-Key included', async () => {
      const token = await h.token(['otp:send']);
      const phone = nextLocalNumber();
      assert.equal((await create(token, phone)).statusCode, 200);
      h.clock.advance(1000);
      const limited = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: phone }, { 'idempotency-key': 'after-429' });
      expectV1Error(limited, 429, 'RATE_LIMITED');
      h.clock.advance(30_000);
      const retried = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: phone }, { 'idempotency-key': 'after-429' });
      assert.equal(retried.statusCode, 200, 'the key was not taken by the refused request');
    });

    it('refuses more than CLIENT_RATE_LIMIT_PER_SECOND requests per client on /v1, saying when to retry', async () => {
      h.clock.advance(1000 - (h.clock.now().getTime() % 1000));
      const token = await h.token(['otp:send', 'otp:verify']);
      const get = (t: string) => h.call('GET', '/v1/otp/00000000-0000-4000-8000-000000000000', t);
      for (let i = 0; i < 3; i++) assert.equal((await get(token)).statusCode, 404);
      const limited = await get(token);
      expectV1Error(limited, 429, 'RATE_LIMITED');
      assert.equal(retryAfter(limited), 1);
      expectV1Error(await h.call('POST', '/v1/otp/verify', token, { id: 'x', otp: '1' }), 429, 'RATE_LIMITED');
      assert.equal((await get(await h.token(['otp:send']))).statusCode, 404, 'another client has its own budget');
      h.clock.advance(1000);
      assert.equal((await get(token)).statusCode, 404, 'the next second');
    });

    it('counts a client across instances through the shared quota, at once', async () => {
      h.clock.advance(1000 - (h.clock.now().getTime() % 1000));
      const c = await h.client(['otp:send']);
      const token = await h.token(['otp:send'], c);
      // Another instance has already claimed this client's whole quota for this second.
      const windowStart = h.clock.now().getTime();
      assert.equal(await h.services.counters.claim(`client:${c.clientId}`, windowStart, 3, 3), 3);
      const get = () => h.call('GET', '/v1/otp/00000000-0000-4000-8000-000000000000', token);
      expectV1Error(await get(), 429, 'RATE_LIMITED');
      h.clock.advance(1000);
      assert.equal((await get()).statusCode, 404, 'the next second has its own quota');
    });

    it(
      'holds the limit across two instances: together they admit at most CLIENT_RATE_LIMIT_PER_SECOND a second',
      { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
      async () => {
        h.clock.advance(1000 - (h.clock.now().getTime() % 1000));
        const c = await h.client(['otp:send']);
        const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: h.config.DATABASE_URL ?? '', CLIENT_RATE_LIMIT_PER_SECOND: '3' });
        const other = await createServices(config, pino({ level: 'silent' }), h.clock, cryptoRandom);
        try {
          const otherApp = await buildApp(appDeps(other));
          const token = await h.token(['otp:send'], c);
          const get = (app: typeof h.app) => app.inject({ method: 'GET', url: '/v1/otp/00000000-0000-4000-8000-000000000000', headers: { authorization: `Bearer ${token}` } });
          // Three seconds of 10 requests at once on each instance: 60 asked, 3 a second admitted in all.
          let admitted = 0;
          for (let second = 0; second < 3; second++) {
            const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i % 2 === 0 ? h.app : otherApp)));
            admitted += answers.filter((r) => r.statusCode === 404).length;
            for (const r of answers.filter((x) => x.statusCode !== 404)) expectV1Error(r, 429, 'RATE_LIMITED');
            h.clock.advance(1000);
          }
          assert.ok(admitted <= 9, `${admitted} admitted over 3 s with a limit of 3 a second`);
          assert.ok(admitted >= 6, `${admitted} admitted: the quota is used, not lost`);
          await otherApp.close();
        } finally {
          await other.db.close();
        }
      },
    );
  });

  describe('concurrent creates of one number', () => {
    let h: Harness;
    const limit = 3;
    before(async () => {
      h = await createHarness(kind, { env: { PHONE_COOLDOWN_SECONDS: '0', PHONE_LIMIT_COUNT: String(limit) } });
    });
    after(() => h.close());

    it(`admits exactly PHONE_LIMIT_COUNT (${limit}) of 12 simultaneous requests`, async () => {
      const token = await h.token(['otp:send']);
      const phone = nextLocalNumber();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: phone, reference: `r${i}` }),
        ),
      );
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [...Array(limit).fill(200), ...Array(12 - limit).fill(429)], results.map((r) => r.body).join('\n'));
      for (const r of results.filter((x) => x.statusCode === 429)) expectV1Error(r, 429, 'RATE_LIMITED');
      const stored = await h.services.db.db
        .selectFrom('verifications')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('phone_number', '=', `+234${phone.slice(1)}`)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.n), limit);
    });

    it('admits every simultaneous request for different numbers', async () => {
      const token = await h.token(['otp:send']);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber() })),
      );
      assert.deepEqual(
        results.map((r) => r.statusCode),
        Array(8).fill(200),
      );
    });

    it('replays one verification for simultaneous requests with one Idempotency-Key', async () => {
      const token = await h.token(['otp:send']);
      const body = { countryCode: '+234', phoneNumber: nextLocalNumber() };
      const results = await Promise.all(
        Array.from({ length: 6 }, () => h.call('POST', '/v1/otp/request', token, body, { 'idempotency-key': 'same-key' })),
      );
      assert.deepEqual(
        results.map((r) => r.statusCode),
        Array(6).fill(200),
        results.map((r) => r.body).join('\n'),
      );
      assert.equal(new Set(results.map((r) => r.json().data.id)).size, 1);
    });
  });
});
