import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { untilNextHour } from '../../src/domain/new-country.js';
import { adminDeps } from '../../src/admin/deps.js';
import { expectV1Error, sentBy } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';
import { harnessCalls, type Made } from '../support/throttle-calls.js';

/** Numbers of one country, each in a range of its own (so that prefix velocity never trips). */
const countries = {
  NG: { countryCode: '+234', number: (i: number) => `0803${String(1000 + i).padStart(4, '0')}123` },
  GH: { countryCode: '+233', number: (i: number) => `024${String(1000 + i).padStart(4, '0')}123` },
  ZA: { countryCode: '+27', number: (i: number) => `082${String(1000 + i).padStart(4, '0')}123` },
} as const;
type Country = keyof typeof countries;
let seq = 0;
const nextNumber = (country: Country) => ({ countryCode: countries[country].countryCode, phoneNumber: countries[country].number((seq += 1)) });
/** An address in a /24 no other create of this run uses. */
const freshAddress = () => {
  seq += 1;
  return `198.${(process.pid + seq) % 250}.${seq % 250}.7`;
};

/** Issue 20: a client's sends towards a country where none of its codes was verified lately (NEW_COUNTRY_LIMIT_COUNT). */
forEachDatabase('new-country limit', (kind) => {
  const cap = 2;
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { NEW_COUNTRY_LIMIT_COUNT: String(cap) } });
  });
  after(() => h.close());
  const { create, made, verify, refresh } = harnessCalls(() => h);

  /** A client that has had a Nigerian code verified, as the service knows after a refresh. */
  const knownInNigeria = async (signals?: Record<string, string>) => {
    const c = await h.client();
    const token = await h.token(undefined, c);
    await verify(token, made(await create(token, { ...nextNumber('NG'), ...(signals && { signals }) })));
    await refresh();
    return token;
  };

  it('admits NEW_COUNTRY_LIMIT_COUNT sends an hour towards a new country, refuses the next until the hour, and opens the country once a code there is verified', async () => {
    const token = await knownInNigeria();
    const first = made(await create(token, nextNumber('GH')));
    for (let i = 1; i < cap; i += 1) made(await create(token, nextNumber('GH')));
    const refused = expectV1Error(await create(token, nextNumber('GH')), 429, 'RATE_LIMITED');
    assert.match(refused.message, /NEW_COUNTRY_LIMIT_COUNT/);
    assert.deepEqual(refused.error.details, [{ factor: 'new_destination', rule: 'new-country', mode: 'enforce' }]);
    made(await create(token, nextNumber('NG')));
    const other = await knownInNigeria();
    made(await create(other, nextNumber('GH')));
    // A verified code opens the country for good.
    await verify(token, first);
    await refresh();
    for (let i = 0; i <= cap; i += 1) made(await create(token, nextNumber('GH')));
  });

  it('leaves a client with no verified code anywhere to its conversion and daily quota', async () => {
    const c = await h.client();
    const token = await h.token(undefined, c);
    await refresh();
    for (let i = 0; i <= cap; i += 1) made(await create(token, nextNumber('GH')));
  });

  it('answers Retry-After until the next UTC hour', async () => {
    const token = await knownInNigeria();
    for (let i = 0; i < cap; i += 1) made(await create(token, nextNumber('ZA')));
    const res = await create(token, nextNumber('ZA'));
    expectV1Error(res, 429, 'RATE_LIMITED');
    assert.equal(res.headers['retry-after'], String(untilNextHour(h.clock.now())));
  });

  it('counts resends towards a new country, and gives a refused create its place back', async () => {
    const token = await knownInNigeria();
    const v = made(await create(token, nextNumber('GH')));
    h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
    assert.equal((await h.call('POST', `/v1/otp/${v.id}/resend`, token)).statusCode, 200);
    expectV1Error(await create(token, nextNumber('GH')), 429, 'RATE_LIMITED');
    h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
    const resend = await h.call('POST', `/v1/otp/${v.id}/resend`, token);
    expectV1Error(resend, 429, 'RATE_LIMITED');
    assert.match((resend.json() as { message: string }).message, /NEW_COUNTRY_LIMIT_COUNT/);
  });

  it('lets a known address or device past it', async () => {
    const ip = freshAddress();
    const token = await knownInNigeria({ ip, deviceId: `device-${ip}` });
    for (let i = 0; i < cap; i += 1) made(await create(token, nextNumber('ZA')));
    expectV1Error(await create(token, { ...nextNumber('ZA'), signals: { ip: freshAddress() } }), 429, 'RATE_LIMITED');
    made(await create(token, { ...nextNumber('ZA'), signals: { ip } }));
    made(await create(token, { ...nextNumber('ZA'), signals: { ip: freshAddress(), deviceId: `device-${ip}` } }));
  });

  it(
    `admits exactly ${cap} of 8 simultaneous creates towards a new country across two instances`,
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      await withSecondInstance(h, { NEW_COUNTRY_LIMIT_COUNT: String(cap) }, async (other) => {
        const token = await knownInNigeria();
        await refresh(other.services);
        const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(token, nextNumber('GH'), i % 2 === 0 ? h.app : other.app)));
        assert.equal(answers.filter((r) => r.statusCode === 200).length, cap, answers.map((r) => r.statusCode).join(','));
        for (const r of answers.filter((x) => x.statusCode !== 200)) expectV1Error(r, 429, 'RATE_LIMITED');
      });
    },
  );
});


/** Issue 20: a throttle falls on the attack, not on the country's known users. */
forEachDatabase('verified history through a throttle', (kind) => {
  const prefixLimit = 3;
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      env: { MIN_CONVERSION: '0.2', MIN_CONVERSION_SAMPLE: '5', PREFIX_LIMIT_COUNT: String(prefixLimit), PREFIX_LIMIT_WINDOW_SECONDS: '600', NEW_COUNTRY_LIMIT_COUNT: '0' },
    });
  });
  after(() => h.close());
  const { create, made, verify, refresh } = harnessCalls(() => h);

  it('lets numbers, addresses, networks and devices with a verified code through a throttled country, and refuses the rest', async () => {
    const token = await h.token();
    const ip = '203.0.113.20';
    const device = `device-known-${process.pid}`;
    const known = nextNumber('ZA');
    await verify(token, made(await create(token, { ...known, signals: { ip, deviceId: device } })));
    const pumped: Made[] = [];
    for (let i = 0; i < 6; i += 1) pumped.push(made(await create(token, { ...nextNumber('ZA'), signals: { ip: freshAddress() } })));
    for (const v of pumped) await sentBy(h, token, v.id);
    await refresh();
    // Throttled to the prefix limit: that many creates of anyone, then refusals.
    for (let i = 0; i < prefixLimit; i += 1) made(await create(token, { ...nextNumber('ZA'), signals: { ip: freshAddress() } }));
    const refused = expectV1Error(await create(token, { ...nextNumber('ZA'), signals: { ip: freshAddress() } }), 429, 'RATE_LIMITED');
    assert.match(refused.message, /MIN_CONVERSION/);
    expectV1Error(await create(token, nextNumber('ZA')), 429, 'RATE_LIMITED');
    made(await create(token, { ...nextNumber('ZA'), signals: { ip } }));
    made(await create(token, { ...nextNumber('ZA'), signals: { ip: '203.0.113.99' } }));
    made(await create(token, { ...nextNumber('ZA'), signals: { ip: freshAddress(), deviceId: device } }));
    h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
    made(await create(token, known));
    // Another client's history is not this one's.
    expectV1Error(await create(await h.token(), { ...nextNumber('ZA'), signals: { ip } }), 429, 'RATE_LIMITED');
  });
});

/** Issue 20: an address whose codes are verified earns room (a carrier's NAT address carries many real users). */
forEachDatabase('signal room earned by verified creates', (kind) => {
  const limit = 3;
  const env = { IP_LIMIT_COUNT: String(limit), IP_PREFIX_LIMIT_COUNT: '0', PREFIX_LIMIT_COUNT: '0', NEW_COUNTRY_LIMIT_COUNT: '0' };
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env });
  });
  after(() => h.close());
  const { create, made, verify } = harnessCalls(() => h);

  it('admits IP_LIMIT_COUNT unverified creates per address, or half its verified ones when that is more', async () => {
    const token = await h.token();
    const quiet = freshAddress();
    for (let i = 0; i < limit; i += 1) made(await create(token, { ...nextNumber('NG'), signals: { ip: quiet } }));
    expectV1Error(await create(token, { ...nextNumber('NG'), signals: { ip: quiet } }), 429, 'RATE_LIMITED');
    const nat = freshAddress();
    for (let i = 0; i < 10; i += 1) await verify(token, made(await create(token, { ...nextNumber('NG'), signals: { ip: nat } })));
    // 10 verified: room for 5 unverified.
    for (let i = 0; i < 5; i += 1) made(await create(token, { ...nextNumber('NG'), signals: { ip: nat } }));
    expectV1Error(await create(token, { ...nextNumber('NG'), signals: { ip: nat } }), 429, 'RATE_LIMITED');
  });

  /** A client and an address of its own whose users verified 10 codes twelve hours ago (a token of now). */
  const verifiedYesterday = async () => {
    const client = await h.client();
    const token = await h.token(undefined, client);
    const nat = freshAddress();
    for (let i = 0; i < 10; i += 1) await verify(token, made(await create(token, { ...nextNumber('NG'), signals: { ip: nat } })));
    // Twelve hours on: none of the hour's creates is left, the day's 10 verified ones are.
    h.clock.advance(12 * 3600_000);
    return { client, nat, token: await h.token(undefined, client) };
  };

  it('counts the last day too: an address whose users verified yesterday has room at the start of the morning, at the same ratio', async () => {
    const yesterday = await verifiedYesterday();
    const { client, nat } = yesterday;
    let { token } = yesterday;
    // The hour's own room (3), then the day's: 5 unverified in the day for 10 verified.
    for (let i = 0; i < 5; i += 1) made(await create(token, { ...nextNumber('NG'), signals: { ip: nat } }));
    expectV1Error(await create(token, { ...nextNumber('NG'), signals: { ip: nat } }), 429, 'RATE_LIMITED');
    // A day and more after them, the verified creates earn nothing: the plain limit again.
    h.clock.advance(25 * 3600_000);
    token = await h.token(undefined, client);
    const later = freshAddress();
    for (let i = 0; i < 10; i += 1) await verify(token, made(await create(token, { ...nextNumber('NG'), signals: { ip: later } })));
    h.clock.advance(25 * 3600_000);
    token = await h.token(undefined, client);
    for (let i = 0; i < limit; i += 1) made(await create(token, { ...nextNumber('NG'), signals: { ip: later } }));
    expectV1Error(await create(token, { ...nextNumber('NG'), signals: { ip: later } }), 429, 'RATE_LIMITED');
  });

  it(
    "admits exactly the day's room of 12 simultaneous creates across two instances",
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      const { nat, token } = await verifiedYesterday();
      await withSecondInstance(h, env, async (other) => {
        const answers = await Promise.all(
          Array.from({ length: 12 }, (_, n) => create(token, { ...nextNumber('NG'), signals: { ip: nat } }, n % 2 === 0 ? h.app : other.app)),
        );
        // 10 verified yesterday: 5 unverified today, however the creates fall between the instances.
        assert.equal(answers.filter((r) => r.statusCode === 200).length, 5, answers.map((r) => r.statusCode).join(','));
        for (const r of answers.filter((x) => x.statusCode !== 200)) expectV1Error(r, 429, 'RATE_LIMITED');
      });
    },
  );
});

/**
 * Issue 20: a client whose CAPTCHA asks only under a throttle (`--captcha-when throttled`). No CAPTCHA provider
 * can run here: a local receiver stands in for Turnstile's siteverify and checks the fields it documents
 * (developers.cloudflare.com/turnstile/get-started/server-side-validation: POST form `secret`, `response`,
 * optional `remoteip` and `idempotency_key`); a token starting `good` passes, any other fails.
 */
forEachDatabase('CAPTCHA before a throttle refuses', (kind) => {
  const cap = 2;
  const secret = '0x4AAAAAAAthrottled-secret';
  let h: Harness;
  let receiver: http.Server;
  const problems: string[] = [];
  let asked = 0;
  before(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        asked += 1;
        const form = Object.fromEntries(new URLSearchParams(body));
        if (req.method !== 'POST') problems.push(`method ${req.method ?? ''}`);
        for (const key of Object.keys(form)) if (!['secret', 'response', 'remoteip', 'idempotency_key'].includes(key)) problems.push(`undocumented field ${key}`);
        if (form.secret !== secret) problems.push('wrong secret');
        const success = (form.response ?? '').startsWith('good');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success, 'error-codes': success ? [] : ['invalid-input-response'] }));
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/turnstile`;
    h = await createHarness(kind, { env: { TURNSTILE_VERIFY_URL: url, NEW_COUNTRY_LIMIT_COUNT: String(cap) } });
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    await h.close();
  });
  const { create, made, verify, refresh } = harnessCalls(() => h);

  it('asks for no token until a throttle would refuse; then 403 CAPTCHA_REQUIRED, and a good token goes past the throttle', async () => {
    const client = await h.client();
    const updated = await runAdminCommand(adminDeps(h.services), {
      name: 'clients.update',
      id: client.clientId,
      change: { captcha: { provider: 'turnstile', secret, when: 'throttled' } },
    });
    assert.ok(updated.ok, JSON.stringify(updated));
    const shown = await runAdminCommand(adminDeps(h.services), { name: 'clients.show', id: client.clientId });
    assert.match(JSON.stringify(shown), /"when":"throttled"/);
    const token = await h.token(undefined, client);
    await verify(token, made(await create(token, nextNumber('NG'))));
    await refresh();
    for (let i = 0; i < cap; i += 1) made(await create(token, nextNumber('GH')));
    assert.equal(asked, 0, 'no token asked for, none checked');
    const required = expectV1Error(await create(token, nextNumber('GH')), 403, 'CAPTCHA_REQUIRED');
    assert.doesNotMatch(JSON.stringify(required), /secret/);
    assert.deepEqual(required.error.details, [{ factor: 'new_destination', rule: 'new-country', mode: 'enforce' }], 'the throttle that asked for it');
    const withToken = (captchaToken: string) =>
      h.app.inject({ method: 'POST', url: '/v1/otp/request', headers: { authorization: `Bearer ${token}` }, payload: { ...nextNumber('GH'), captchaToken } });
    expectV1Error(await withToken(`bad-${process.pid}`), 403, 'CAPTCHA_FAILED');
    made(await withToken(`good-${process.pid}-1`));
    made(await withToken(`good-${process.pid}-2`));
    assert.deepEqual(problems, []);
    // A client without a CAPTCHA is refused as before.
    const plain = await h.client();
    const plainToken = await h.token(undefined, plain);
    await verify(plainToken, made(await create(plainToken, nextNumber('NG'))));
    await refresh();
    for (let i = 0; i < cap; i += 1) made(await create(plainToken, nextNumber('GH')));
    expectV1Error(await create(plainToken, nextNumber('GH')), 429, 'RATE_LIMITED');
  });
});
