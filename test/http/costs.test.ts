import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runAudited } from '../../src/admin/audited.js';
import type { AdminCommand } from '../../src/admin/commands.js';
import type { RouteView } from '../../src/admin/route-commands.js';
import { formatResult } from '../../src/cli/format.js';
import { adminDeps } from '../../src/admin/deps.js';
import type { CostRow } from '../../src/domain/cost-report.js';
import type { Price } from '../../src/domain/prices.js';
import { e164Of, eventually as until, nextLocalNumber } from '../support/api.js';
import { runCommand } from '../support/command-line.js';
import { embeddedDataDir } from '../support/databases.js';
import { forEachDatabase } from '../support/each-database.js';
import type { Harness } from '../support/harness.js';
import { startSmscAndGateway, type SmscAndGateway } from '../support/smsc-and-gateway.js';
import { withSecondInstance } from '../support/second-instance.js';
import { deliveredNumber, eventually, netSmppMissing, type PerlSmsc } from '../providers/smpp-peers.js';

interface Costed {
  id: string;
  otp: string;
  status: string;
  deliveries: { provider: string; status: string; cost: string | null }[];
  cost: { amount: string; currency: string; unknownSends: number };
}

const sheet = ['provider,channel,destination,currency,price', 'smpp,sms,NG,USD,0.0031', 'http,sms,default,USD,0.0079', ''].join('\n');

/**
 * Contract 17's prices and cost ledger, on both databases: each send a provider takes is priced by the imported
 * sheet (its provider, channel and longest-matching destination), the record, GET /v1/stats, `otp-service costs`
 * and the metric add the sends up. The providers are a real SMSC the project did not write (Debian's Net::SMPP,
 * test/peers/smsc.pl, which withholds receipts for numbers ending in 98) and the operator's HTTP gateway.
 */
forEachDatabase('prices and the cost ledger', (kind) => {
  const missing = netSmppMissing();
  let peers: SmscAndGateway;
  let h: Harness;
  let smsc: PerlSmsc;
  before(async () => {
    if (missing) return;
    peers = await startSmscAndGateway(kind, { MIN_CONVERSION: '0' });
    ({ h, smsc } = peers);
  });
  after(async () => {
    if (!missing) await peers.close();
  });

  const admin = (command: AdminCommand) => runAudited(adminDeps(h.services), 'cli', command);
  const ok = async (command: AdminCommand) => {
    const r = await admin(command);
    assert.ok(r.ok, r.ok ? '' : r.error);
    return r.value;
  };
  const record = async (token: string, id: string): Promise<Costed> => {
    await h.services.sendWorker.idle();
    const res = await h.call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Costed }).data;
  };
  const shape = (v: Costed) => v.deliveries.map((a) => `${a.provider} ${a.status} ${a.cost ?? 'unknown'}`);
  const create = async (token: string, body: Record<string, unknown>) => {
    const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', ...body });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Costed }).data;
  };

  it('prices each send by its provider and destination, and the record, the stats, costs and the metric add them up', { skip: missing ?? false }, async () => {
    assert.deepEqual(await ok({ name: 'prices.import', csv: sheet, file: 'prices.csv' }), { file: 'prices.csv', added: 2, updated: 0 });
    await ok({ name: 'routes.set', channel: 'sms', destination: 'NG', providers: ['smpp', 'http'], failoverAfterSeconds: 20 });
    const client = await h.client(['otp:send', 'otp:verify']);
    const token = await h.token(['otp:send', 'otp:verify'], client);

    // Delivered through the SMSC at NG's price, then verified.
    const delivered = await create(token, { phoneNumber: deliveredNumber() });
    await until(async () => shape(await record(token, delivered.id)).join() === 'smpp SENT 0.0031' || shape(await record(token, delivered.id)).join() === 'smpp DELIVERED 0.0031');
    assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: delivered.id, otp: delivered.otp })).statusCode, 200);
    const verified = await record(token, delivered.id);
    assert.deepEqual(verified.cost, { amount: '0.0031', currency: 'USD', unknownSends: 0 });

    // Silent on the SMSC: the failover's send through the gateway is priced too, and the record adds both.
    const silent = `${nextLocalNumber().slice(0, -2)}98`;
    const twice = await create(token, { phoneNumber: silent });
    await eventually(() => smsc.events.some((e) => e.event === 'submit_sm' && e.destination_addr === e164Of(silent).slice(1)), 'the SMSC to take the code');
    await until(async () => shape(await record(token, twice.id)).join() === 'smpp SENT 0.0031');
    h.clock.advance(21_000);
    await h.services.deliveries.takeDueFailovers();
    const both = await record(token, twice.id);
    assert.deepEqual(shape(both), ['smpp SENT 0.0031', 'http SENT 0.0079']);
    assert.deepEqual(both.cost, { amount: '0.011', currency: 'USD', unknownSends: 0 });

    // Ghana: no route, so the channel's list (the SMSC first), and no SMSC price for it: unknown, never a guess.
    const ghana = await create(token, { countryCode: '+233', phoneNumber: '0241234567' });
    await until(async () => (await record(token, ghana.id)).deliveries.length === 1);
    const unknown = await record(token, ghana.id);
    assert.deepEqual(unknown.deliveries.map((a) => [a.provider, a.cost]), [['smpp', null]]);
    assert.deepEqual(unknown.cost, { amount: '0', currency: 'USD', unknownSends: 1 });

    // The client's stats: NG's three sends cost 0.0141, one code verified.
    const stats = (await h.call('GET', '/v1/stats', token)).json() as { data: { regionCode: string; sends: number; verified: number; cost: string; costPerVerified: string | null }[] };
    const byRegion = Object.fromEntries(stats.data.map((r) => [r.regionCode, [r.verified, r.cost, r.costPerVerified]]));
    assert.deepEqual(byRegion, { GH: [0, '0', null], NG: [1, '0.0141', '0.0141'] });

    // The operator's ledger, grouped each way.
    const costs = async (by: string) => (await ok({ name: 'costs', from: null, to: null, by } as AdminCommand)) as CostRow[];
    assert.deepEqual(await costs('provider'), [
      { provider: 'http', sends: 1, verified: 0, cost: '0.0079', costPerVerified: null, unknownSends: 0 },
      { provider: 'smpp', sends: 3, verified: 1, cost: '0.0062', costPerVerified: '0.0062', unknownSends: 1 },
    ]);
    assert.deepEqual(await costs('country'), [
      { country: 'GH', sends: 1, verified: 0, cost: '0', costPerVerified: null, unknownSends: 1 },
      { country: 'NG', sends: 3, verified: 1, cost: '0.0141', costPerVerified: '0.0141', unknownSends: 0 },
    ]);
    assert.deepEqual(
      (await costs('route')).map((r) => [r.route, r.sends, r.cost]),
      [
        ['sms NG', 3, '0.0141'],
        ['sms default', 1, '0'],
      ],
    );
    assert.deepEqual((await costs('client')).map((r) => [r.client, r.sends, r.cost]), [[client.clientId, 4, '0.0141']]);
    const today = h.clock.now().toISOString().slice(0, 10);
    assert.deepEqual((await costs('day')).map((r) => [r.day, r.sends, r.verified, r.cost]), [[today, 4, 1, '0.0141']]);
    const metrics = (await h.services.metrics.render()).body;
    assert.match(metrics, /otp_send_cost_total\{channel="sms",provider="smpp",country="NG"\} 0\.0062\b/);
    assert.match(metrics, /otp_send_cost_total\{channel="sms",provider="http",country="NG"\} 0\.0079\b/);
    assert.doesNotMatch(metrics, /otp_send_cost_total\{[^}]*country="GH"/, 'an unknown cost is not counted as 0');
  });

  it('a budget refuses the send that would pass it, holds each admitted send at its price until its cost replaces it, and gives back what was not sent', { skip: missing ?? false }, async () => {
    // The first test's sheet and route: the SMSC at 0.0031 for NG, the gateway at 0.0079 everywhere.
    const client = await h.client(['otp:send', 'otp:verify']);
    const token = await h.token(['otp:send', 'otp:verify'], client);
    await ok({ name: 'clients.update', id: client.clientId, change: { dailySpendLimit: '0.0100' } });
    const spend = async () => {
      await h.services.sendWorker.idle();
      const shown = (await ok({ name: 'clients.show', id: client.clientId })) as { budgets: { period: string; limit: string | null; spent: string }[] };
      return shown.budgets.map((b) => `${b.period} ${b.spent} of ${b.limit ?? 'no limit'}`);
    };
    const post = (body: Record<string, unknown>) => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', ...body });

    // On PostgreSQL five creates race on separate connections: exactly three fit (3 x 0.0031 = 0.0093).
    const raced = await Promise.all(Array.from({ length: 5 }, () => post({ phoneNumber: deliveredNumber() })));
    assert.deepEqual(raced.map((r) => r.statusCode).sort(), [200, 200, 200, 429, 429], raced.map((r) => r.body).join('\n'));
    const refused = raced.find((r) => r.statusCode === 429);
    assert.ok(refused);
    const now = h.clock.now();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    assert.equal(refused.headers['retry-after'], String(Math.ceil((midnight - now.getTime()) / 1000)));
    const error = (refused.json() as { error: { code: string; details: unknown[] } }).error;
    assert.deepEqual(error, { code: 'RATE_LIMITED', details: [{ rule: 'budget', limit: '0.01', spent: '0.0093', period: 'day' }, { factor: 'quota_exceeded', rule: 'budget', mode: 'enforce' }] });
    // Taken by the SMSC at their price: each cost replaced its hold, and the spend stands.
    assert.deepEqual(await spend(), ['day 0.0093 of 0.01', 'month 0.0093 of no limit']);

    // A resend refused by its cool-down gives its hold back at once.
    await ok({ name: 'clients.update', id: client.clientId, change: { dailySpendLimit: '0.05', monthlySpendLimit: '0.06' } });
    const made = raced.find((r) => r.statusCode === 200);
    assert.ok(made);
    const id = (made.json() as { data: Costed }).data.id;
    assert.equal((await h.call('POST', `/v1/otp/${id}/resend`, token)).statusCode, 429);
    assert.deepEqual(await spend(), ['day 0.0093 of 0.05', 'month 0.0093 of 0.06']);

    // No SMSC price for Ghana: held, and then charged, at the highest SMS price imported (the gateway's 0.0079).
    const ghana = await post({ countryCode: '+233', phoneNumber: '0241234568' });
    assert.equal(ghana.statusCode, 200, ghana.body);
    await until(async () => (await record(token, (ghana.json() as { data: Costed }).data.id)).deliveries.length === 1);
    assert.deepEqual(await spend(), ['day 0.0172 of 0.05', 'month 0.0172 of 0.06']);

    // A delivery-confirmed failover is a send the service makes: charged when the gateway takes it, past a limit
    // if need be (the month's now), and the next create is refused for the month.
    await ok({ name: 'clients.update', id: client.clientId, change: { monthlySpendLimit: '0.025' } });
    const silent = `${nextLocalNumber().slice(0, -2)}98`;
    const twice = await post({ phoneNumber: silent });
    assert.equal(twice.statusCode, 200, twice.body);
    const twiceId = (twice.json() as { data: Costed }).data.id;
    await until(async () => shape(await record(token, twiceId)).join() === 'smpp SENT 0.0031');
    h.clock.advance(21_000);
    await h.services.deliveries.takeDueFailovers();
    assert.deepEqual(shape(await record(token, twiceId)), ['smpp SENT 0.0031', 'http SENT 0.0079']);
    assert.deepEqual(await spend(), ['day 0.0282 of 0.05', 'month 0.0282 of 0.025']);
    const overMonth = await post({ phoneNumber: deliveredNumber() });
    assert.equal(overMonth.statusCode, 429);
    assert.deepEqual((overMonth.json() as { error: { details: unknown[] } }).error.details, [{ rule: 'budget', limit: '0.025', spent: '0.0282', period: 'month' }, { factor: 'quota_exceeded', rule: 'budget', mode: 'enforce' }]);
    const later = h.clock.now();
    assert.equal(overMonth.headers['retry-after'], String(Math.ceil((Date.UTC(later.getUTCFullYear(), later.getUTCMonth() + 1, 1) - later.getTime()) / 1000)));

    // A hold whose create never committed (its process died in between) is given back by the sweep, once past
    // its grace; a hold of a verification still pending is kept.
    await ok({ name: 'clients.update', id: client.clientId, change: { monthlySpendLimit: null } });
    const budget = { daily: '0.05', monthly: null };
    assert.equal(await h.services.spend.hold(client.clientId, '00000000-0000-4000-8000-0000000000aa', '0.002', budget, h.clock.now()), null);
    assert.deepEqual(await spend(), ['day 0.0302 of 0.05', 'month 0.0302 of no limit']);
    assert.equal(await h.services.spend.releaseEnded(new Date(h.clock.now().getTime() - 60_000), 100), 0, 'within its grace');
    h.clock.advance(61_000);
    assert.equal(await h.services.spend.releaseEnded(new Date(h.clock.now().getTime() - 60_000), 100), 1);
    assert.deepEqual(await spend(), ['day 0.0282 of 0.05', 'month 0.0282 of no limit']);

    // The limit is checked as an operator writes it; none removes it.
    const wrong = await admin({ name: 'clients.update', id: client.clientId, change: { dailySpendLimit: '25,00' } });
    assert.deepEqual(wrong, { ok: false, error: '--daily-spend-limit must be an amount in COST_CURRENCY such as 25.00 (or none)' });
    await ok({ name: 'clients.update', id: client.clientId, change: { dailySpendLimit: null } });
    assert.deepEqual(await spend(), []);
    assert.equal((await post({ phoneNumber: deliveredNumber() })).statusCode, 200);
  });

  it(
    'a budget admits exactly what fits of simultaneous creates across two instances',
    { skip: missing ?? (kind === 'pglite' ? 'the embedded database admits one process' : false) },
    async () => {
      // Ghana has no route and no SMSC price: each create holds the highest SMS price (0.0079), on either instance.
      const client = await h.client(['otp:send', 'otp:verify']);
      const token = await h.token(['otp:send', 'otp:verify'], client);
      await ok({ name: 'clients.update', id: client.clientId, change: { dailySpendLimit: '0.0395' } });
      await withSecondInstance(h, {}, async (other) => {
        const answers = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 === 0 ? h.app : other.app).inject({
              method: 'POST',
              url: '/v1/otp/request',
              headers: { authorization: `Bearer ${token}` },
              payload: { countryCode: '+233', phoneNumber: `02412${String(34_000 + i).padStart(5, '0')}` },
            }),
          ),
        );
        assert.deepEqual(
          answers.map((r) => r.statusCode).sort(),
          [200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429],
          answers.map((r) => r.body).join('\n'),
        );
      });
      await h.services.sendWorker.idle();
      const shown = (await ok({ name: 'clients.show', id: client.clientId })) as { budgets: { period: string; spent: string }[] };
      assert.deepEqual(shown.budgets.map((b) => `${b.period} ${b.spent}`), ['day 0.0395', 'month 0.0395']);
    },
  );

  it('a sheet with a wrong line, or in another currency, changes nothing; a price is listed and removed, each change audited', { skip: missing ?? false }, async () => {
    const before = (await ok({ name: 'prices.list' })) as Price[];
    for (const [csv, pattern] of [
      ['provider,channel,destination,currency,price\nsmpp,sms,GH,USD,0.002\nsmpp,sms,GH,EUR,0.002\n', /line 3: the price is in EUR, and this service counts in USD \(COST_CURRENCY\)/],
      ['provider,channel,destination,currency,price\nsmpp,sms,GH,USD,0.002\n\nsmpp,fax,GH,USD,1\ntwillio,sms,GH,USD,1\nsmpp,sms,Ghana,USD,1\nsmpp,sms,GH,USD,-1\nsmpp,sms,GH,USD\n',
        /line 4: the channel is sms, call, whatsapp, voice, telegram, not "fax"; line 5: no provider is named "twillio"; line 6: the destination is .* not "Ghana"; line 7: the price is a decimal number of USD \(0\.0125\), not "-1"; line 8: 4 columns, not 5/],
      ['provider,channel,destination,currency,price\nsmpp,sms,+233,USD,0.002\nsmpp,sms,+233,USD,0.003\n', /line 3: smpp sms \+233 is priced on line 2 too/],
      ['provider;channel;destination;currency;price\n', /the first line must be the header provider,channel,destination,currency,price/],
      ['provider,channel,destination,currency,price\n', /the file has no price under its header/],
    ] as const) {
      const refused = await admin({ name: 'prices.import', csv, file: 'sheet.csv' });
      assert.equal(refused.ok, false, csv);
      if (!refused.ok) assert.match(refused.error, pattern);
      if (!refused.ok) assert.match(refused.error, /^sheet\.csv: nothing imported: /);
    }
    assert.deepEqual(await ok({ name: 'prices.list' }), before, 'nothing refused was saved');
    const updated = await ok({ name: 'prices.import', csv: '\ufeffProvider,Channel,Destination,Currency,Price\r\nsmpp,SMS,ng,usd,0.00310\r\nsmpp,sms,+233 24,USD,"0.0042"\r\n', file: 'more.csv' });
    assert.deepEqual(updated, { file: 'more.csv', added: 1, updated: 1 });
    const listed = (await ok({ name: 'prices.list' })) as Price[];
    assert.deepEqual(
      listed.map((p) => `${p.provider} ${p.channel} ${p.destination} ${p.price} ${p.currency}`),
      ['http sms default 0.0079 USD', 'smpp sms +23324 0.0042 USD', 'smpp sms NG 0.0031 USD'],
    );
    assert.deepEqual(await ok({ name: 'prices.remove', provider: 'smpp', channel: 'sms', destination: '+23324' }), { removed: { provider: 'smpp', channel: 'sms', destination: '+23324' } });
    const gone = await admin({ name: 'prices.remove', provider: 'smpp', channel: 'sms', destination: '+23324' });
    assert.deepEqual(gone, { ok: false, error: 'there is no smpp sms price for +23324' });
    const audit = (await ok({ name: 'audit.list', limit: 50 })) as { action: string; target: string | null; outcome: string }[];
    assert.ok(audit.some((e) => e.action === 'prices.import' && e.target === 'more.csv' && e.outcome === 'ok'));
    assert.ok(audit.some((e) => e.action === 'prices.import' && e.target === 'sheet.csv' && e.outcome.startsWith('refused: sheet.csv: nothing imported')));
    assert.ok(audit.some((e) => e.action === 'prices.remove' && e.target === 'smpp sms +23324' && e.outcome === 'ok'));
  });

  it('--policy best gives most first sends to the provider that delivers and gets codes verified, keeps the other measured, and none to an open circuit', { skip: missing ?? false }, async () => {
    // The last hour on the NG route (the tests above): the SMSC delivered codes and one was verified after its
    // send; the gateway took only the failovers of codes the SMSC sat on, and reported none delivered.
    await ok({ name: 'routes.set', channel: 'sms', destination: 'NG', providers: ['http', 'smpp'], policy: 'best', failoverAfterSeconds: 20 });
    const ng = async () => ((await ok({ name: 'routes.list' })) as RouteView[]).find((r) => r.channel === 'sms' && r.destination === 'NG');
    const route = await ng();
    assert.equal(route?.policy, 'best');
    const [http, smpp] = route?.shares ?? [];
    assert.deepEqual([http?.provider, http?.perMille, http?.why, smpp?.provider, smpp?.perMille, smpp?.why], ['http', 50, 'floor', 'smpp', 950, 'best']);
    assert.ok(http && http.sends >= 2 && http.delivered === 0 && http.verified === 0, JSON.stringify(http));
    assert.ok(smpp && smpp.delivered >= 1 && smpp.verified === 1 && smpp.score > http.score, JSON.stringify(smpp));
    assert.match(formatResult({ name: 'routes.list' }, [route]), /\n {2}smpp: 95 % of first sends \(best\): \d+ sent in the last hour, \d+ delivered, 1 verified; score 0\.\d{3}\n/);

    // The creates draw their first provider by those shares.
    const order = (id: string) => h.services.routesInForce.current().providersFor('sms', { id, phoneNumber: '+2348031234567', regionCode: 'NG' }, [], (r) => h.services.bestShares.weights(r));
    const firstSmpp = Array.from({ length: 400 }, () => order(randomUUID())[0]).filter((p) => p === 'smpp').length;
    assert.ok(firstSmpp > 350 && firstSmpp < 400, `${firstSmpp} of 400 first through the SMSC`);
    const client = await h.client(['otp:send', 'otp:verify']);
    const token = await h.token(['otp:send', 'otp:verify'], client);
    const made = await create(token, { phoneNumber: deliveredNumber() });
    const first = order(made.id)[0];
    await until(async () => (await record(token, made.id)).deliveries.length > 0);
    assert.equal((await record(token, made.id)).deliveries[0]?.provider, first, 'the send went through the provider drawn for it');

    // The SMSC failing now: its circuit open, it takes nothing until it closes.
    for (let i = 0; i < 10 && !h.services.breaker.isOpen('smpp'); i++) h.services.breaker.record('smpp', true);
    assert.deepEqual((await ng())?.shares?.map((s) => `${s.provider} ${s.perMille} ${s.why}`), ['http 1000 best', 'smpp 0 circuit open']);
    h.services.breaker.record('smpp', false);
    await ok({ name: 'routes.remove', channel: 'sms', destination: 'NG' });
  });
});

describe('otp-service prices and costs', () => {
  it('imports a file, lists prices and costs as tables; another currency or a wrong line exits 2 and changes nothing', async () => {
    const dataDir = embeddedDataDir('otp-prices-cli-');
    const files = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-prices-'));
    const env = { LOG_LEVEL: 'silent', DATA_DIR: dataDir, SMS_PROVIDER: 'log', COST_CURRENCY: 'ngn' };
    try {
      const file = path.join(files, 'prices.csv');
      fs.writeFileSync(file, 'provider,channel,destination,currency,price\nlog,sms,NG,NGN,4.5\ntwilio,sms,default,NGN,12\n');
      const imported = await runCommand(['prices', 'import', file], env);
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal(imported.stdout, `imported ${file}: 2 prices added, 0 updated\n`);
      const table = await runCommand(['prices', 'list'], env);
      assert.equal(table.stdout, 'PROVIDER\tCHANNEL\tDESTINATION\tPRICE\nlog\tsms\tNG\t4.5 NGN\ntwilio\tsms\tdefault\t12 NGN\n');
      const usd = path.join(files, 'usd.csv');
      fs.writeFileSync(usd, 'provider,channel,destination,currency,price\nlog,sms,NG,USD,0.01\n');
      const refused = await runCommand(['prices', 'import', usd, '--json'], env);
      assert.equal(refused.code, 2, refused.stderr);
      assert.deepEqual(JSON.parse(refused.stderr), { error: `${usd}: nothing imported: line 2: the price is in USD, and this service counts in NGN (COST_CURRENCY)` });
      const stdin = await runCommand(['prices', 'import', '-'], env, 'provider,channel,destination,currency,price\nlog,sms,NG,NGN,5\n');
      assert.equal(stdin.stdout, 'imported -: 0 prices added, 1 updated\n');
      const absent = await runCommand(['prices', 'import', path.join(files, 'absent.csv')], env);
      assert.equal(absent.code, 2);
      assert.match(absent.stderr, /cannot read .*absent\.csv: ENOENT/);
      const listed = JSON.parse((await runCommand(['prices', 'list', '--json'], env)).stdout) as Price[];
      assert.deepEqual(listed, [
        { provider: 'log', channel: 'sms', destination: 'NG', currency: 'NGN', price: '5' },
        { provider: 'twilio', channel: 'sms', destination: 'default', currency: 'NGN', price: '12' },
      ]);
      const costs = await runCommand(['costs', '--by', 'country'], env);
      assert.equal(costs.code, 0, costs.stderr);
      assert.equal(costs.stdout, 'no send was made in those days\n');
      assert.deepEqual(JSON.parse((await runCommand(['costs', '--json'], env)).stdout), []);
      const wrongBy = await runCommand(['costs', '--by', 'week'], env);
      assert.equal(wrongBy.code, 2);
      assert.match(wrongBy.stderr, /--by is one of day, country, provider, client, route, not "week"/);
      const wrongDay = await runCommand(['costs', '--from', '2026-02-30'], env);
      assert.equal(wrongDay.code, 1);
      assert.match(wrongDay.stderr, /--from must be a calendar day/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(files, { recursive: true, force: true });
    }
  });
});
