import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { addressCountriesOf } from '../../src/metadata/address-country.js';
import { expectV1Error, sentBy } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startLog } from '../support/start-log.js';
import { TestClock } from '../support/clock.js';
import { harnessCalls, type Made, readConversion } from '../support/throttle-calls.js';

/**
 * Issue 20: where an end user's address is (IP_COUNTRY_DATABASE) against their number's country. Under a country
 * throttle a local user with no history keeps room while the country's codes are verified; under a resend throttle
 * only a local user gets the free resends. The addresses are real ones of the shipped database: 41.0.0.0/16 is
 * South African, 102.88.0.0/13 Nigerian, 23.0.0.0/12 in the United States.
 */
let seq = 0;
const za = () => ({ countryCode: '+27', phoneNumber: `082${String(1000 + ((process.pid + (seq += 1)) % 9000)).padStart(4, '0')}${String(seq % 1000).padStart(3, '0')}` });
const ng = () => ({ countryCode: '+234', phoneNumber: `0805${String(1000 + ((process.pid + (seq += 1)) % 9000)).padStart(4, '0')}${String(seq % 1000).padStart(3, '0')}` });
/** An address of its own /24 in South Africa, in Nigeria, or in the United States. */
const inZA = () => `41.0.${(seq += 1) % 250}.${1 + ((process.pid + seq) % 250)}`;
const inNG = () => `102.${88 + ((process.pid + (seq += 1)) % 8)}.${seq % 250}.9`;
const inUS = () => `23.${(seq += 1) % 16}.${(process.pid + seq) % 250}.9`;
const device = () => `country-device-${process.pid}-${(seq += 1)}`;

it('looks addresses up in the shipped database, and IP_COUNTRY_DATABASE names another or none', () => {
  const shipped = addressCountriesOf(loadConfig({}).IP_COUNTRY_DATABASE);
  assert.ok(shipped);
  assert.equal(shipped.countryOf('41.0.7.1'), 'ZA');
  assert.equal(shipped.countryOf('102.89.3.4'), 'NG');
  assert.equal(shipped.countryOf('23.1.2.3'), 'US');
  assert.equal(shipped.countryOf('2001:4200::1'), 'ZA');
  assert.equal(shipped.countryOf('2001:4860:4860::8888'), 'US');
  // Private and reserved addresses are in no country.
  assert.equal(shipped.countryOf('10.1.2.3'), null);
  assert.equal(shipped.countryOf('127.0.0.1'), null);
  assert.equal(shipped.countryOf('not an address'), null);
  assert.equal(addressCountriesOf(loadConfig({ IP_COUNTRY_DATABASE: 'off' }).IP_COUNTRY_DATABASE), null);
  assert.throws(() => loadConfig({ IP_COUNTRY_DATABASE: '/nonexistent/countries.mmdb' }), /IP_COUNTRY_DATABASE.*cannot be read/s);
  // A file that is no MMDB fails at start, not at the first lookup.
  assert.throws(() => addressCountriesOf(new URL(import.meta.url).pathname));
});

it('warns at start in production that the shipped database is a snapshot, and not with another or none', async () => {
  const production = { NODE_ENV: 'production', SMS_PROVIDER: 'smpp', SMPP_URL: 'smpp://otp:secret@127.0.0.1:9', PUBLIC_BASE_URL: 'https://otp.example.org' };
  const warned = await startLog(production);
  assert.match(warned, /IP_COUNTRY_DATABASE=shipped in production/);
  assert.match(warned, /"builtAt":"2026-06-17T/);
  assert.doesNotMatch(await startLog({ ...production, IP_COUNTRY_DATABASE: 'off' }), /IP_COUNTRY_DATABASE/);
  assert.doesNotMatch(await startLog({}), /IP_COUNTRY_DATABASE/);
});

/**
 * ZA's users of the hour: 8 verified codes, before any attack. Then another client's 34 pumped sends from abroad:
 * 8 of 42 is under MIN_CONVERSION, and the country is throttled across clients (the pumping client too, for its
 * own conversion; the first one is not). Answers the first client's token and its users' devices.
 */
async function throttleZA(h: Harness, { create, made, verify }: ReturnType<typeof harnessCalls>): Promise<{ token: string; devices: string[] }> {
  const token = await h.token();
  const users: Made[] = [];
  const devices = Array.from({ length: 8 }, device);
  for (const deviceId of devices) users.push(made(await create(token, { ...za(), signals: { ip: inZA(), deviceId } })));
  for (const v of users) await verify(token, v);
  const pumper = await h.token();
  const pumped: Made[] = [];
  for (let i = 0; i < 34; i += 1) pumped.push(made(await create(pumper, { ...za(), signals: { ip: inUS(), deviceId: device() } })));
  for (const v of pumped) await sentBy(h, pumper, v.id);
  await readConversion(h.services);
  // Creates under the throttle are those after it began.
  h.clock.advance(1);
  assert.ok(h.services.conversion.throttleOn({ regionCode: 'ZA', countryCode: '+27', network: 'Vodacom', provider: 'log' }, h.clock.now()), 'ZA should be throttled');
  return { token, devices };
}

forEachDatabase('a country throttle keeps room for local users', (kind) => {
  const prefixLimit = 2;
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      // The cap on unknown users from abroad is off: the pumping from abroad is what throttles the country here.
      env: { MIN_CONVERSION: '0.2', MIN_CONVERSION_SAMPLE: '5', PREFIX_LIMIT_COUNT: String(prefixLimit), PREFIX_LIMIT_WINDOW_SECONDS: '3600', NEW_COUNTRY_LIMIT_COUNT: '0', ABROAD_LIMIT_SHARE: '0' },
    });
  });
  after(() => h.close());
  const { create, made, verify } = harnessCalls(() => h);

  it('lets local users with no history through while their unverified codes are few beside those verified in the country, and never one abroad', async () => {
    const { token, devices } = await throttleZA(h, harnessCalls(() => h));
    const local = () => create(token, { ...za(), signals: { ip: inZA(), deviceId: device() } });
    // The prefix limit's creates go to anyone, as before.
    for (let i = 0; i < prefixLimit; i += 1) made(await create(token, { ...za(), signals: { ip: inUS(), deviceId: device() } }));
    const abroad = expectV1Error(await create(token, { ...za(), signals: { ip: inUS(), deviceId: device() } }), 429, 'RATE_LIMITED');
    assert.match(abroad.message, /MIN_CONVERSION/);
    expectV1Error(await create(token, za()), 429, 'RATE_LIMITED');
    // A Nigerian address is not local to a South African number.
    expectV1Error(await create(token, { ...za(), signals: { ip: inNG(), deviceId: device() } }), 429, 'RATE_LIMITED');
    // The local room: the prefix limit's worth of unverified codes (2) while few are verified under the throttle
    // (the hour's 8 before it count for nothing).
    const room = [made(await local()), made(await local())];
    expectV1Error(await local(), 429, 'RATE_LIMITED');
    // Verified, they give their places back.
    for (const v of room) await verify(token, v);
    made(await local());
    made(await local());
    expectV1Error(await local(), 429, 'RATE_LIMITED');
    // 30 codes of known users verified under the throttle (32 in all): room for 3 unverified.
    for (let i = 0; i < 30; i += 1) await verify(token, made(await create(token, { ...za(), signals: { ip: inZA(), deviceId: devices[i % devices.length] ?? '' } })));
    made(await local());
    expectV1Error(await local(), 429, 'RATE_LIMITED');
    // Abroad is still refused.
    expectV1Error(await create(token, { ...za(), signals: { ip: inUS(), deviceId: device() } }), 429, 'RATE_LIMITED');
  });
});

forEachDatabase('a country throttle with IP_COUNTRY_DATABASE=off', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      env: { MIN_CONVERSION: '0.2', MIN_CONVERSION_SAMPLE: '5', PREFIX_LIMIT_COUNT: '1', NEW_COUNTRY_LIMIT_COUNT: '0', IP_COUNTRY_DATABASE: 'off' },
    });
  });
  after(() => h.close());
  const { create, made } = harnessCalls(() => h);

  it('keeps no room for local users: every user with no history is refused', async () => {
    const { token } = await throttleZA(h, harnessCalls(() => h));
    made(await create(token, { ...za(), signals: { ip: inUS(), deviceId: device() } }));
    expectV1Error(await create(token, { ...za(), signals: { ip: inZA(), deviceId: device() } }), 429, 'RATE_LIMITED');
  });
});

forEachDatabase('a resend throttle gives free resends to local users only', (kind) => {
  const sample = 4;
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      env: { MIN_RESEND_SAMPLE: String(sample), UNKNOWN_USER_RESENDS: '1', MIN_CONVERSION_SAMPLE: '100000', MIN_CONVERSION_SHORT_SAMPLE: '100000', NEW_COUNTRY_LIMIT_COUNT: '0' },
    });
  });
  after(() => h.close());
  const { create, made, verify, resend } = harnessCalls(() => h);
  const cooldown = () => h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
  const resent = async (token: string, v: Made) => assert.equal((await resend(token, v)).statusCode, 200);

  it('refuses the first resend of an unknown user abroad, gives a local one and one with no address theirs, and lets a known user abroad resend', async () => {
    const c = await h.client();
    let token = await h.token(undefined, c);
    // A user abroad who verified yesterday: known by their device.
    const traveller = device();
    await verify(token, made(await create(token, { ...ng(), signals: { ip: inUS(), deviceId: traveller } })));
    h.clock.advance(86_400_000);
    token = await h.token(undefined, c);
    const codes: Made[] = [];
    for (let i = 0; i < sample; i += 1) codes.push(made(await create(token, { ...ng(), signals: { ip: inNG(), deviceId: device() } })));
    cooldown();
    for (const v of codes) await resent(token, v);
    h.clock.advance(31_000);
    await readConversion(h.services);
    assert.ok(h.services.conversion.resendThrottleOn(c.clientId, h.clock.now()), 'the client should be throttled');
    const local = made(await create(token, { ...ng(), signals: { ip: inNG(), deviceId: device() } }));
    const unknownAbroad = made(await create(token, { ...ng(), signals: { ip: inUS(), deviceId: device() } }));
    const noAddress = made(await create(token, ng()));
    const knownAbroad = made(await create(token, { ...ng(), signals: { ip: inUS(), deviceId: traveller } }));
    cooldown();
    const refused = expectV1Error(await resend(token, unknownAbroad), 429, 'RATE_LIMITED');
    assert.match(refused.message, /MIN_RESEND_SAMPLE/);
    for (const v of [local, noAddress, knownAbroad]) await resent(token, v);
    cooldown();
    // The free resend was the only one, for local users as before; a known user resends on.
    expectV1Error(await resend(token, local), 429, 'RATE_LIMITED');
    expectV1Error(await resend(token, noAddress), 429, 'RATE_LIMITED');
    await resent(token, knownAbroad);
  });
});

forEachDatabase('unknown users from abroad are capped per country and hour (ABROAD_LIMIT_SHARE)', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      // An hour of its own: the room is counted per UTC hour.
      clock: new TestClock(Date.parse('2026-11-23T09:00:00Z')),
      // Room: half the country's codes verified over the hour, at least 3. No conversion throttle gets in the way.
      env: { ABROAD_LIMIT_SHARE: '0.5', ABROAD_LIMIT_MIN: '3', MIN_CONVERSION_SAMPLE: '100000', MIN_CONVERSION_SHORT_SAMPLE: '100000', NEW_COUNTRY_LIMIT_COUNT: '0' },
    });
  });
  after(() => h.close());
  const { create, made, verify, refresh } = harnessCalls(() => h);

  it('refuses past the room across clients, names the factor, spares local users, users of no known address and known users, and grows the room with verified codes', async () => {
    const token = await h.token();
    const other = await h.token();
    const known = device();
    await verify(token, made(await create(token, { ...za(), signals: { ip: inZA(), deviceId: known } })));
    for (let i = 0; i < 3; i += 1) made(await create(i % 2 === 0 ? token : other, { ...za(), signals: { ip: inUS(), deviceId: device() } }));
    const refused = await create(other, { ...za(), signals: { ip: inUS(), deviceId: device() } });
    const body = expectV1Error(refused, 429, 'RATE_LIMITED');
    assert.match(body.message, /ABROAD_LIMIT_SHARE/);
    assert.deepEqual(body.error.details, [{ factor: 'ip_country_mismatch', rule: 'abroad', mode: 'enforce' }]);
    assert.equal(refused.headers['retry-after'], String(3600));
    // A Nigerian address is abroad for a South African number; the cap is the country's: a Nigerian number from the
    // same address is not held by it.
    expectV1Error(await create(token, { ...za(), signals: { ip: inNG(), deviceId: device() } }), 429, 'RATE_LIMITED');
    made(await create(token, { ...ng(), signals: { ip: inNG(), deviceId: device() } }));
    made(await create(token, { ...za(), signals: { ip: inZA(), deviceId: device() } }));
    made(await create(token, za()));
    // A device with a verified code is a known user's, wherever it is.
    made(await create(token, { ...za(), signals: { ip: inUS(), deviceId: known } }));
    // Nine more codes verified in the country, ten in all, as the conversion watch reads them: room for 5.
    for (let i = 0; i < 9; i += 1) await verify(token, made(await create(token, { ...za(), signals: { ip: inZA(), deviceId: device() } })));
    await refresh();
    // 3 of the 5 are taken.
    made(await create(other, { ...za(), signals: { ip: inUS(), deviceId: device() } }));
    made(await create(other, { ...za(), signals: { ip: inUS(), deviceId: device() } }));
    expectV1Error(await create(other, { ...za(), signals: { ip: inUS(), deviceId: device() } }), 429, 'RATE_LIMITED');
    // The next hour starts afresh.
    h.clock.advance(3600_000);
    made(await create(await h.token(), { ...za(), signals: { ip: inUS(), deviceId: device() } }));
  });
});
