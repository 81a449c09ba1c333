import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, it } from 'node:test';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { pruneHistory } from '../../src/store/retention.js';
import { detailFields, e164Of, expectV1Error, nextLocalNumber, operatorCommand, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';
import { runCommand } from '../support/command-line.js';
import { embeddedDataDir } from '../support/databases.js';

// Prefix velocity off: the numbers below share ranges, and only the signal limits are under test here.
// The addresses are real ones abroad for the numbers: the cap on unknown users from abroad is off, to test the signals alone.
const env = { IP_LIMIT_COUNT: '3', IP_PREFIX_LIMIT_COUNT: '5', DEVICE_LIMIT_COUNT: '2', SIGNAL_WINDOW_SECONDS: '600', PREFIX_LIMIT_COUNT: '0', ABROAD_LIMIT_SHARE: '0' };

let seq = 0;
/** A /24 (and a /48) no other test of this run uses: `n` is the host part. */
const freshNetwork = () => {
  seq += 1;
  const a = (process.pid + seq * 13) % 250;
  const b = seq % 250;
  return { v4: (n: number) => `203.${a}.${b}.${n}`, v6: (n: string) => `2001:db8:${a.toString(16)}${b.toString(16).padStart(2, '0')}:${n}` };
};
const freshDevice = () => `device-${process.pid}-${(seq += 1)}`;

/** Contract 14: creates per end-user address, network and device, per client, each per SIGNAL_WINDOW_SECONDS. */
forEachDatabase('signal limits', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env });
  });
  after(() => h.close());

  const create = (token: string, signals: Record<string, unknown>, app = h.app) =>
    app.inject({
      method: 'POST',
      url: '/v1/otp/request',
      headers: { authorization: `Bearer ${token}` },
      payload: { countryCode: '+234', phoneNumber: nextLocalNumber(), signals },
    });

  const admin = (command: AdminCommand) => operatorCommand(h.services, command);

  it('puts a rule in shadow for one client: its sends the rule would refuse go out as shadow_block naming the factor, other clients are still refused', async () => {
    const shadowed = await h.client();
    const other = await h.client();
    const shown = await admin({ name: 'rules.set', rule: 'device', mode: 'shadow', clientId: shadowed.clientId });
    assert.deepEqual(shown, { rule: 'device', factor: 'device_reuse', mode: 'enforce', clients: { [shadowed.clientId]: 'shadow' } });
    const device = freshDevice();
    for (const client of [shadowed, other]) {
      const token = await h.token(undefined, client);
      for (let n = 0; n < 2; n += 1) {
        const ok = await create(token, { deviceId: device });
        assert.equal(ok.statusCode, 200, ok.body);
        assert.deepEqual((ok.json() as { data: RecordBody }).data.risk, { verdict: 'allow', factors: [] });
      }
    }
    const third = await create(await h.token(undefined, shadowed), { deviceId: device });
    assert.equal(third.statusCode, 200, third.body);
    const record = (third.json() as { data: RecordBody }).data;
    const risk = { verdict: 'shadow_block', factors: [{ factor: 'device_reuse', rule: 'device', mode: 'shadow' }] };
    assert.deepEqual(record.risk, risk);
    assert.deepEqual((await h.call('GET', `/v1/otp/${record.id}`, await h.token(undefined, shadowed))).json<{ data: RecordBody }>().data.risk, risk, 'kept on the record');
    const refused = expectV1Error(await create(await h.token(undefined, other), { deviceId: device }), 429, 'RATE_LIMITED');
    assert.deepEqual(refused.error.details, [{ factor: 'device_reuse', rule: 'device', mode: 'enforce' }]);
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /otp_risk_factors_total\{factor="device_reuse",rule="device",mode="enforce"\} [1-9]/);
    // Off for every client: the rule is not asked, and nothing names it.
    await admin({ name: 'rules.set', rule: 'device', mode: 'off', clientId: null });
    const unheard = await create(await h.token(undefined, other), { deviceId: device });
    assert.equal(unheard.statusCode, 200, unheard.body);
    assert.deepEqual((unheard.json() as { data: RecordBody }).data.risk, { verdict: 'allow', factors: [] });
    const listed = (await admin({ name: 'rules.list' })) as { rule: string; factor: string; mode: string; clients: Record<string, string> }[];
    assert.deepEqual(listed.find((r) => r.rule === 'device'), { rule: 'device', factor: 'device_reuse', mode: 'off', clients: { [shadowed.clientId]: 'shadow' } });
    assert.equal(listed.find((r) => r.rule === 'ip')?.mode, 'enforce');
    // Back to enforce for every client: its row goes, the client's own stays.
    await admin({ name: 'rules.set', rule: 'device', mode: 'enforce', clientId: null });
    expectV1Error(await create(await h.token(undefined, other), { deviceId: device }), 429, 'RATE_LIMITED');
    const refusedSet = await runAdminCommand(adminDeps(h.services), { name: 'rules.set', rule: 'devices', mode: 'shadow', clientId: null });
    assert.deepEqual(refusedSet, { ok: false, error: `no rule devices: the rules are captcha, countries, line-types, lists, prefix, conversion, resend-throttle, new-country, abroad, ip, network, device, phone, daily-quota, budget, sim-swap, call-forwarding, decision` });
    await admin({ name: 'rules.set', rule: 'device', mode: 'enforce', clientId: shadowed.clientId });
  });

  it('judges each signal on its own: an address in shadow past its limit does not let its network past its own', async () => {
    const client = await h.client();
    await admin({ name: 'rules.set', rule: 'ip', mode: 'shadow', clientId: client.clientId });
    const token = await h.token(undefined, client);
    const address = freshNetwork().v4(7);
    // IP_LIMIT_COUNT (3) is passed in shadow by the 4th and 5th; IP_PREFIX_LIMIT_COUNT (5) is the network's.
    for (let i = 0; i < 5; i += 1) assert.equal((await create(token, { ip: address })).statusCode, 200);
    const refused = expectV1Error(await create(token, { ip: address }), 429, 'RATE_LIMITED');
    assert.match(refused.message, /IP_PREFIX_LIMIT_COUNT/);
    assert.deepEqual(refused.error.details, [
      { factor: 'ip_concentration', rule: 'ip', mode: 'shadow' },
      { factor: 'ip_concentration', rule: 'network', mode: 'enforce' },
    ]);
  });

  it('verdicts: per rule, the creates it refused and the sends it shadowed, and how many of their numbers had a code verified later', async () => {
    const shadowed = await h.client();
    const enforced = await h.client();
    await admin({ name: 'rules.set', rule: 'device', mode: 'shadow', clientId: shadowed.clientId });
    const device = freshDevice();
    const send = async (token: string, phoneNumber: string, deviceId: string) =>
      h.app.inject({ method: 'POST', url: '/v1/otp/request', headers: { authorization: `Bearer ${token}` }, payload: { countryCode: '+234', phoneNumber, signals: { deviceId } } });
    const verify = async (token: string, res: { json: () => unknown }) => {
      const { id, otp } = (res.json() as { data: RecordBody }).data;
      assert.equal((await h.call('POST', '/v1/otp/verify', token, { id, otp })).statusCode, 200);
    };
    const s = await h.token(undefined, shadowed);
    const e = await h.token(undefined, enforced);
    for (const token of [s, e]) for (let n = 0; n < 2; n += 1) assert.equal((await send(token, nextLocalNumber(), device)).statusCode, 200);
    await verify(s, await send(s, nextLocalNumber(), device));
    const real = nextLocalNumber();
    expectV1Error(await send(e, real, device), 429, 'RATE_LIMITED');
    expectV1Error(await send(e, nextLocalNumber(), device), 429, 'RATE_LIMITED');
    // The refused user comes back from another device and types the code: the rule refused a real person.
    await verify(e, await send(e, real, freshDevice()));
    await h.services.refusals.idle();
    const today = h.clock.now().toISOString().slice(0, 10);
    const deviceRow = async (clientId: string) =>
      ((await admin({ name: 'verdicts', from: today, to: today, clientId })) as { rule: string }[]).find((v) => v.rule === 'device');
    assert.deepEqual(await deviceRow(enforced.clientId), { rule: 'device', factor: 'device_reuse', refused: 2, shadowed: 0, verifiedLater: 1 });
    assert.deepEqual(await deviceRow(shadowed.clientId), { rule: 'device', factor: 'device_reuse', refused: 0, shadowed: 1, verifiedLater: 1 });
    // The client reads the same of its own traffic.
    const own = await h.call('GET', `/v1/stats?by=factor&from=${today}&to=${today}`, e);
    assert.equal(own.statusCode, 200, own.body);
    const rows = own.json<{ data: { rule: string }[] }>().data;
    assert.equal(rows.length, 18);
    assert.deepEqual(rows.find((v) => v.rule === 'device'), { rule: 'device', factor: 'device_reuse', refused: 2, shadowed: 0, verifiedLater: 1 });
    expectV1Error(await h.call('GET', '/v1/stats?by=rule', e), 400, 'VALIDATION_ERROR');
    const all = (await admin({ name: 'verdicts', from: today, to: today, clientId: null })) as { rule: string; refused: number }[];
    assert.equal(all.length, 18);
    assert.ok((all.find((v) => v.rule === 'device')?.refused ?? 0) >= 2);
    // Erasing the number takes its refusals with it.
    await admin({ name: 'erase', phoneNumber: e164Of(real), clientId: enforced.clientId });
    assert.deepEqual(await deviceRow(enforced.clientId), { rule: 'device', factor: 'device_reuse', refused: 1, shadowed: 0, verifiedLater: 0 });
    await admin({ name: 'rules.set', rule: 'device', mode: 'enforce', clientId: shadowed.clientId });
  });

  it('otp-service rules: lists each rule with its factor and mode, sets one for a client, and refuses an unknown mode', async () => {
    const dataDir = kind === 'pglite' ? embeddedDataDir('otp-rules-cli-') : null;
    const cliEnv = { LOG_LEVEL: 'silent', ...(dataDir ? { DATA_DIR: dataDir } : { DATABASE_URL: String(h.config.DATABASE_URL) }) };
    try {
      const client = dataDir ? JSON.parse((await runCommand(['clients', 'create', '--name', 'rules', '--scopes', 'otp:send', '--json'], cliEnv)).stdout).clientId : (await h.client()).clientId;
      const set = await runCommand(['rules', 'set', 'network', 'shadow', '--client', client], cliEnv);
      assert.equal(set.code, 0, set.stderr);
      assert.equal(set.stdout, `rule network (ip_concentration): enforce for every client, client ${client} shadow\n`);
      const table = await runCommand(['rules', 'list'], cliEnv);
      assert.match(table.stdout, /^RULE\tFACTOR\tMODE\tCLIENTS\ncaptcha\tcaptcha_failed\tenforce\t\n/);
      assert.match(table.stdout, new RegExp(`\nnetwork\tip_concentration\tenforce\t${client}=shadow\n`));
      const json = JSON.parse((await runCommand(['rules', 'list', '--json'], cliEnv)).stdout) as { rule: string }[];
      assert.equal(json.length, 18);
      const wrong = await runCommand(['rules', 'set', 'network', 'watch'], cliEnv);
      assert.equal(wrong.code, 1);
      assert.match(wrong.stderr, /a rule's mode is enforce, shadow or off, not "watch"/);
      assert.equal((await runCommand(['rules', 'set', 'network'], cliEnv)).code, 2);
      await runCommand(['rules', 'set', 'network', 'enforce', '--client', client], cliEnv);
    } finally {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses malformed signals with 400 VALIDATION_ERROR naming each field, and never shows them', async () => {
    const token = await h.token();
    for (const ip of ['1.2.3', '300.1.1.1', '2001:db8::g', 'example.com', '']) {
      const refused = expectV1Error(await create(token, { ip }), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(refused), ['signals.ip'], ip);
    }
    expectV1Error(await create(token, { platform: 'windows' }), 400, 'VALIDATION_ERROR');
    expectV1Error(await create(token, { deviceId: 'x'.repeat(257) }), 400, 'VALIDATION_ERROR');
    expectV1Error(await create(token, { ip: 7 }), 400, 'VALIDATION_ERROR');
    const signals = { ip: '::ffff:198.51.100.9', deviceId: 'd-secret-1', userAgent: 'ua-secret', appVersion: '9.9.9-secret', platform: 'ios' };
    const ok = await create(token, signals);
    assert.equal(ok.statusCode, 200, ok.body);
    const id = (ok.json() as { data: RecordBody }).data.id;
    const fetched = await h.call('GET', `/v1/otp/${id}`, token);
    for (const body of [ok.body, fetched.body]) {
      assert.doesNotMatch(body, /secret|198\.51\.100\.9|signals/);
    }
    const row = await h.services.db.db.selectFrom('verifications').select(['signal_ip', 'signal_network', 'signal_device']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { signal_ip: '198.51.100.9', signal_network: '198.51.100.0/24', signal_device: 'd-secret-1' });
  });

  it('admits IP_LIMIT_COUNT creates per address, any spelling of it, per client; the next is 429 with Retry-After', async () => {
    const net = freshNetwork();
    const token = await h.token();
    const spellings = [net.v4(7), `::ffff:${net.v4(7)}`, `::FFFF:${net.v4(7)}`];
    for (const ip of spellings) assert.equal((await create(token, { ip })).statusCode, 200, ip);
    const refused = await create(token, { ip: net.v4(7) });
    expectV1Error(refused, 429, 'RATE_LIMITED');
    assert.equal(refused.headers['retry-after'], '600');
    assert.match(refused.json<{ message: string }>().message, /IP_LIMIT_COUNT/);
    assert.deepEqual(refused.json<{ error: { details: unknown } }>().error.details, [{ factor: 'ip_concentration', rule: 'ip', mode: 'enforce' }]);
    // Another address of the network, another client, and a create without an address are not counted with it.
    assert.equal((await create(token, { ip: net.v4(8) })).statusCode, 200);
    assert.equal((await create(await h.token(), { ip: net.v4(7) })).statusCode, 200);
    assert.equal((await create(token, {})).statusCode, 200);
    // Past the window of the oldest, the address has room again.
    h.clock.advance(601_000);
    assert.equal((await create(token, { ip: net.v4(7) })).statusCode, 200);
  });

  it('compares IPv6 addresses as addresses, and counts IP_PREFIX_LIMIT_COUNT per /48', async () => {
    const net = freshNetwork();
    const token = await h.token();
    const full = net.v6('0:0:0:0:1');
    for (const ip of [full, full.replace(':0:0:0:0:1', '::1'), full.toUpperCase()]) assert.equal((await create(token, { ip })).statusCode, 200, ip);
    expectV1Error(await create(token, { ip: full.replace(':0:0:0:0:1', ':0::1') }), 429, 'RATE_LIMITED');
    // Two more addresses of the /48 reach IP_PREFIX_LIMIT_COUNT (5); the next is refused.
    assert.equal((await create(token, { ip: net.v6('1::2') })).statusCode, 200);
    assert.equal((await create(token, { ip: net.v6('ffff::3') })).statusCode, 200);
    const refused = expectV1Error(await create(token, { ip: net.v6('2::4') }), 429, 'RATE_LIMITED');
    assert.match(refused.message, /IP_PREFIX_LIMIT_COUNT/);
  });

  it('counts IP_PREFIX_LIMIT_COUNT per IPv4 /24, and DEVICE_LIMIT_COUNT per device', async () => {
    const net = freshNetwork();
    const token = await h.token();
    for (let n = 1; n <= 5; n += 1) assert.equal((await create(token, { ip: net.v4(n) })).statusCode, 200);
    expectV1Error(await create(token, { ip: net.v4(6) }), 429, 'RATE_LIMITED');
    const device = freshDevice();
    for (let n = 0; n < 2; n += 1) assert.equal((await create(token, { deviceId: device })).statusCode, 200);
    const refused = expectV1Error(await create(token, { deviceId: device, ip: freshNetwork().v4(1) }), 429, 'RATE_LIMITED');
    assert.match(refused.message, /DEVICE_LIMIT_COUNT/);
    assert.deepEqual(refused.error.details, [{ factor: 'device_reuse', rule: 'device', mode: 'enforce' }]);
  });

  it('a refused create counts toward nothing, and a verified create earns its place back', async () => {
    const net = freshNetwork();
    const device = freshDevice();
    const token = await h.token();
    const made: RecordBody[] = [];
    for (let n = 0; n < 2; n += 1) made.push((await create(token, { ip: net.v4(1), deviceId: device })).json<{ data: RecordBody }>().data);
    // Refused by the device limit: the address's count stays at 2.
    expectV1Error(await create(token, { ip: net.v4(1), deviceId: device }), 429, 'RATE_LIMITED');
    assert.equal((await create(token, { ip: net.v4(1) })).statusCode, 200, 'the third place of the address');
    expectV1Error(await create(token, { ip: net.v4(1) }), 429, 'RATE_LIMITED');
    const first = made[0];
    assert.ok(first);
    assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: first.id, otp: first.otp })).statusCode, 200);
    // One place back for the address and the device: one more create each, and no more.
    assert.equal((await create(token, { ip: net.v4(1), deviceId: device })).statusCode, 200);
    expectV1Error(await create(token, { ip: net.v4(1) }), 429, 'RATE_LIMITED');
    expectV1Error(await create(token, { deviceId: device }), 429, 'RATE_LIMITED');
  });

  it('admits exactly IP_LIMIT_COUNT of 12 simultaneous creates from one address', async () => {
    const net = freshNetwork();
    const token = await h.token();
    const answers = await Promise.all(Array.from({ length: 12 }, () => create(token, { ip: net.v4(9) })));
    assert.equal(answers.filter((r) => r.statusCode === 200).length, 3, answers.map((r) => r.statusCode).join(','));
  });

  it(
    'admits exactly IP_LIMIT_COUNT and DEVICE_LIMIT_COUNT of 40 simultaneous creates across two instances',
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      await withSecondInstance(h, env, async (other) => {
        const token = await h.token();
        const net = freshNetwork();
        const byIp = await Promise.all(Array.from({ length: 40 }, (_, n) => create(token, { ip: net.v4(20) }, n % 2 === 0 ? h.app : other.app)));
        assert.equal(byIp.filter((r) => r.statusCode === 200).length, 3, byIp.map((r) => r.statusCode).join(','));
        for (const r of byIp.filter((x) => x.statusCode !== 200)) expectV1Error(r, 429, 'RATE_LIMITED');
        const device = freshDevice();
        const byDevice = await Promise.all(Array.from({ length: 40 }, (_, n) => create(token, { deviceId: device }, n % 2 === 0 ? h.app : other.app)));
        assert.equal(byDevice.filter((r) => r.statusCode === 200).length, 2, byDevice.map((r) => r.statusCode).join(','));
      });
    },
  );

  it('forgets the signals after RETENTION_DAYS, keeping the verification', async () => {
    const token = await h.token();
    const made = await create(token, { ip: freshNetwork().v4(1), userAgent: 'kept-for-a-while' });
    const id = made.json<{ data: RecordBody }>().data.id;
    const db = h.services.db.db;
    const read = () => db.selectFrom('verifications').select(['signal_ip', 'signals']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.notEqual((await read()).signals, null);
    await pruneHistory(db, new Date(h.clock.now().getTime() - 1000));
    assert.notEqual((await read()).signals, null, 'newer than the cut-off');
    await pruneHistory(db, new Date(h.clock.now().getTime() + 1000));
    assert.deepEqual(await read(), { signal_ip: null, signals: null });
  });
});

forEachDatabase('signal limits turned off', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { IP_LIMIT_COUNT: '0', IP_PREFIX_LIMIT_COUNT: '0', DEVICE_LIMIT_COUNT: '0', PREFIX_LIMIT_COUNT: '0' } });
  });
  after(() => h.close());

  it('0 turns each off', async () => {
    const token = await h.token();
    for (let n = 0; n < 12; n += 1) {
      const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), signals: { ip: '192.0.2.77', deviceId: 'one-device' } });
      assert.equal(res.statusCode, 200, res.body);
    }
  });
});
