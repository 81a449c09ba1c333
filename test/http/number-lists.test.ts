import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { expectV1Error, operatorCommand, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

let range = 0;
/** Local numbers of a range (+234 803 RRRR xxx) no other test of this run uses: `n` is the last 3 digits. */
const freshRange = () => {
  range += 1;
  const r = String((process.pid * 17 + range * 11) % 10_000).padStart(4, '0');
  return { local: (n: number) => `0803${r}${String(n).padStart(3, '0')}`, e164: (n: number) => `+234803${r}${String(n).padStart(3, '0')}`, prefix: `+234803${r}` };
};

/** Contract 14: block and allow lists, service-wide and per client. */
forEachDatabase('block and allow lists', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      env: { PREFIX_LIMIT_COUNT: '3', PREFIX_LIMIT_WINDOW_SECONDS: '600', IP_LIMIT_COUNT: '1', DEVICE_LIMIT_COUNT: '1', CLIENT_DAILY_SEND_LIMIT: '0' },
    });
  });
  after(() => h.close());

  const admin = (command: AdminCommand) => operatorCommand(h.services, command);
  const create = (token: string, phoneNumber: string, extra: object = {}) =>
    h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber, ...extra });

  it('blocks a number or a prefix, service-wide or for one client, with 403 NUMBER_NOT_ALLOWED naming the entry', async () => {
    const r = freshRange();
    const a = await h.client();
    const b = await h.client();
    const [ta, tb] = [await h.token(undefined, a), await h.token(undefined, b)];
    await admin({ name: 'lists.add', kind: 'block', value: r.prefix.slice(0, -1) + ' ' + r.prefix.slice(-1), clientId: null, note: 'pumped' });
    for (const token of [ta, tb]) {
      const refused = expectV1Error(await create(token, r.local(1)), 403, 'NUMBER_NOT_ALLOWED');
      assert.deepEqual(refused.error.details, [{ rule: 'blocked', value: r.prefix }, { factor: 'in_block_list', rule: 'lists', mode: 'enforce' }]);
    }
    await admin({ name: 'lists.remove', kind: 'block', value: r.prefix, clientId: null });
    assert.equal((await create(ta, r.local(1))).statusCode, 200);
    await admin({ name: 'lists.add', kind: 'block', value: r.e164(2), clientId: a.clientId, note: null });
    expectV1Error(await create(ta, r.local(2)), 403, 'NUMBER_NOT_ALLOWED');
    assert.equal((await create(tb, r.local(2))).statusCode, 200, "another client's block is not this one's");
    assert.equal((await create(ta, r.local(4))).statusCode, 200, 'a whole number blocks only itself');
  });

  it('lets an allowed number past the per-number limits, prefix velocity and signal limits, not past blocks', async () => {
    const r = freshRange();
    const c = await h.client();
    const token = await h.token(undefined, c);
    const signals = { ip: '198.51.100.200', deviceId: `lists-${process.pid}-${range}` };
    await admin({ name: 'lists.add', kind: 'allow', value: r.e164(1), clientId: c.clientId, note: 'the QA phone' });
    // The same number again and again: no cool-down, no PHONE_LIMIT_COUNT, no signal limit (1 each here).
    for (let n = 0; n < 7; n += 1) assert.equal((await create(token, r.local(1), { signals })).statusCode, 200, `create ${n}`);
    // Its prefix is past PREFIX_LIMIT_COUNT (3) by now: others in it are refused, the allowed one is not.
    expectV1Error(await create(token, r.local(2)), 403, 'NUMBER_NOT_ALLOWED');
    assert.equal((await create(token, r.local(1))).statusCode, 200);
    // Another client gets nothing from this client's entry.
    expectV1Error(await create(await h.token(), r.local(1)), 403, 'NUMBER_NOT_ALLOWED');
    // A block wins over an allow.
    await admin({ name: 'lists.add', kind: 'block', value: r.e164(1), clientId: null, note: null });
    const refused = expectV1Error(await create(token, r.local(1)), 403, 'NUMBER_NOT_ALLOWED');
    assert.deepEqual(refused.error.details, [{ rule: 'blocked', value: r.e164(1) }, { factor: 'in_block_list', rule: 'lists', mode: 'enforce' }]);
    await admin({ name: 'lists.remove', kind: 'block', value: r.e164(1), clientId: null });
    assert.equal((await create(token, r.local(1))).statusCode, 200);
  });

  it('lists show prints every entry; bad values, unknown clients and missing entries are refused', async () => {
    const r = freshRange();
    const c = await h.client();
    await admin({ name: 'lists.add', kind: 'block', value: r.prefix, clientId: c.clientId, note: 'first' });
    await admin({ name: 'lists.add', kind: 'block', value: r.prefix, clientId: c.clientId, note: 'second' });
    await admin({ name: 'lists.add', kind: 'allow', value: r.e164(9), clientId: null, note: null });
    const shown = (await admin({ name: 'lists.show' })) as { blocks: Record<string, unknown>[]; allows: Record<string, unknown>[] };
    const block = shown.blocks.filter((e) => e.value === r.prefix);
    assert.equal(block.length, 1, 'adding again updates the note');
    assert.deepEqual(Object.keys(block[0] ?? {}).sort(), ['clientId', 'createdAt', 'note', 'value']);
    assert.equal(block[0]?.note, 'second');
    assert.equal(block[0]?.clientId, c.clientId);
    assert.ok(shown.allows.some((e) => e.value === r.e164(9) && e.clientId === null));
    const fails = async (command: AdminCommand) => assert.equal((await runAdminCommand(adminDeps(h.services), command)).ok, false, JSON.stringify(command));
    await fails({ name: 'lists.add', kind: 'block', value: '2348030', clientId: null, note: null });
    await fails({ name: 'lists.add', kind: 'block', value: '+0123', clientId: null, note: null });
    await fails({ name: 'lists.add', kind: 'block', value: '+2348030', clientId: '00000000-0000-4000-8000-000000000000', note: null });
    await fails({ name: 'lists.remove', kind: 'allow', value: r.e164(8), clientId: null });
    await fails({ name: 'lists.remove', kind: 'block', value: r.prefix, clientId: null });
  });

  it('counts refusals by a block as otp_creates_refused_total{reason="blocked"} and as its risk factor', async () => {
    const r = freshRange();
    const token = await h.token();
    await admin({ name: 'lists.add', kind: 'block', value: r.e164(5), clientId: null, note: null });
    const metric = async () => {
      const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
      const count = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
      return [count(/otp_creates_refused_total\{reason="blocked"\} (\d+)/), count(/otp_risk_factors_total\{factor="in_block_list",rule="lists",mode="enforce"\} (\d+)/)];
    };
    const before = await metric();
    expectV1Error(await create(token, r.local(5)), 403, 'NUMBER_NOT_ALLOWED');
    assert.deepEqual(await metric(), before.map((n) => n + 1));
  });
});

forEachDatabase('allow lists and the daily quota', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { CLIENT_DAILY_SEND_LIMIT: '2' } });
  });
  after(() => h.close());

  it('an allowed number still counts toward CLIENT_DAILY_SEND_LIMIT', async () => {
    const r = freshRange();
    const c = await h.client();
    const token = await h.token(undefined, c);
    await operatorCommand(h.services, { name: 'lists.add', kind: 'allow', value: r.e164(1), clientId: null, note: null });
    for (let n = 0; n < 2; n += 1) assert.equal((await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: r.local(1) })).statusCode, 200);
    expectV1Error(await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: r.local(1) }), 429, 'RATE_LIMITED');
  });

  it('the daily quota in shadow for one client: its creates and resends past it go out, named on the record; another client is still refused', async () => {
    const r = freshRange();
    const shadowed = await h.client();
    await operatorCommand(h.services, { name: 'rules.set', rule: 'daily-quota', mode: 'shadow', clientId: shadowed.clientId });
    const token = await h.token(undefined, shadowed);
    const create = (n: number) => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: r.local(n) });
    for (let n = 1; n <= 2; n += 1) assert.equal((await create(n)).statusCode, 200);
    const past = await create(3);
    assert.equal(past.statusCode, 200, past.body);
    const record = past.json<{ data: RecordBody }>().data;
    assert.deepEqual(record.risk, { verdict: 'shadow_block', factors: [{ factor: 'quota_exceeded', rule: 'daily-quota', mode: 'shadow' }] });
    h.clock.advance(61_000);
    assert.equal((await h.call('POST', `/v1/otp/${record.id}/resend`, token)).statusCode, 200, 'a resend past the quota goes too');
    const other = await h.token();
    const made = [];
    for (let n = 4; n <= 5; n += 1) made.push(await h.call('POST', '/v1/otp/request', other, { countryCode: '+234', phoneNumber: r.local(n) }));
    assert.deepEqual(made.map((m) => m.statusCode), [200, 200]);
    const refused = expectV1Error(await h.call('POST', '/v1/otp/request', other, { countryCode: '+234', phoneNumber: r.local(6) }), 429, 'RATE_LIMITED');
    assert.deepEqual(refused.error.details, [{ factor: 'quota_exceeded', rule: 'daily-quota', mode: 'enforce' }]);
    h.clock.advance(61_000);
    const id = made[1]?.json<{ data: RecordBody }>().data.id;
    const resend = expectV1Error(await h.call('POST', `/v1/otp/${id}/resend`, other), 429, 'RATE_LIMITED');
    assert.deepEqual(resend.error.details, [{ factor: 'quota_exceeded', rule: 'daily-quota', mode: 'enforce' }]);
  });
});
