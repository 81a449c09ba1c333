import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { runAudited } from '../../src/admin/audited.js';
import type { AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import type { RouteView } from '../../src/admin/route-commands.js';
import { createVerification, expectV1Error, type RecordBody } from '../support/api.js';
import { runCommand } from '../support/command-line.js';
import { embeddedDataDir } from '../support/databases.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Contract 17, routes: a channel's providers per destination (prefix, country, default), through the operator
 * commands, followed by the sends of the service that holds them. Two SMS providers are configured (`http`, an
 * operator's gateway here, then `log`), so that which one a code went through says which route it took.
 */
forEachDatabase('routes', (kind) => {
  let h: Harness;
  let gateway: Receiver;
  /** Numbers whose sends the gateway refuses (422), as a provider refuses a barred number. */
  const refusing = new Set<string>();
  let seq = 0;
  /** A Nigerian number starting 080 then `second` (0805...), unique to the run. */
  const number = (second: string) => `080${second}${String((seq += 1) * 7 + (process.pid % 1000) * 1000).padStart(7, '0').slice(-7)}`;
  const env = {
    SMS_PROVIDER: 'http,log',
    HTTP_GATEWAY_URL: '',
    HTTP_GATEWAY_SECRET: secret,
    PUBLIC_BASE_URL: 'https://otp.example.test',
  };

  before(async () => {
    gateway = await startReceiver((req: { body: string }, res: http.ServerResponse) => {
      const { verificationId, to } = JSON.parse(req.body) as { verificationId: string; to: string };
      if (refusing.has(to)) res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":"number barred"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${verificationId}` }));
    });
    env.HTTP_GATEWAY_URL = gateway.url;
    h = await createHarness(kind, { env });
  });
  after(async () => {
    await h.close();
    await gateway.close();
  });

  const admin = (command: AdminCommand) => runAudited(adminDeps(h.services), 'cli', command);
  const ok = async (command: AdminCommand): Promise<unknown> => {
    const r = await admin(command);
    assert.ok(r.ok, `${command.name}: ${r.ok ? '' : r.error}`);
    return r.value;
  };
  /** The provider that took the code of a new verification to `phoneNumber` (of `countryCode`), once sent. */
  const sentThrough = async (token: string, phoneNumber: string, countryCode = '+234'): Promise<{ provider: string | null; status: string; v: RecordBody }> => {
    const v = await createVerification(h, token, { countryCode, phoneNumber });
    await h.services.sendWorker.idle();
    const res = await h.call('GET', `/v1/otp/${v.id}`, token);
    const data = (res.json() as { data: { delivery: { provider: string | null; status: string }; status: string } }).data;
    return { provider: data.delivery.provider, status: data.status, v };
  };

  it('sends each number through its longest matching prefix, then its country, then default, then the provider setting', async () => {
    const token = await h.token();
    assert.equal((await sentThrough(token, number('5'))).provider, 'http', 'no route: SMS_PROVIDER, http first');
    await ok({ name: 'routes.set', channel: 'sms', destination: '+234805', providers: ['log', 'http'] });
    assert.equal((await sentThrough(token, number('5'))).provider, 'log', 'the prefix route');
    assert.equal((await sentThrough(token, number('6'))).provider, 'http', 'another prefix keeps the setting');
    await ok({ name: 'routes.set', channel: 'sms', destination: 'ng', providers: ['log'] });
    assert.equal((await sentThrough(token, number('6'))).provider, 'log', 'the country route');
    await ok({ name: 'routes.set', channel: 'sms', destination: '+2348057', providers: ['http'] });
    assert.equal((await sentThrough(token, `08057${String(1000 + seq++).padStart(6, '0')}`)).provider, 'http', 'the longer prefix');
    assert.equal((await sentThrough(token, '0241234567', '+233')).provider, 'http', 'GH has no route: the setting');
    await ok({ name: 'routes.set', channel: 'sms', destination: 'default', providers: ['log'] });
    assert.equal((await sentThrough(token, '0241234568', '+233')).provider, 'log', "the channel's default route replaces the setting");
    await ok({ name: 'routes.remove', channel: 'sms', destination: 'default' });
    await ok({ name: 'routes.remove', channel: 'sms', destination: 'NG' });
    assert.equal((await sentThrough(token, number('6'))).provider, 'http', 'removed: the setting again');
    await ok({ name: 'routes.remove', channel: 'sms', destination: '+234805' });
    await ok({ name: 'routes.remove', channel: 'sms', destination: '+2348057' });
  });

  it("fails over in the route's order, and only through its providers", async () => {
    const token = await h.token();
    await ok({ name: 'routes.set', channel: 'sms', destination: '+234806', providers: ['http'] });
    const only = number('6');
    refusing.add(`+234${only.slice(1)}`);
    const refused = await sentThrough(token, only);
    assert.equal(refused.status, 'FAILED', 'the route names http alone: its refusal ends the verification, with no failover to log');
    await ok({ name: 'routes.set', channel: 'sms', destination: '+234806', providers: ['http', 'log'] });
    const next = number('6');
    refusing.add(`+234${next.slice(1)}`);
    const moved = await sentThrough(token, next);
    assert.deepEqual({ provider: moved.provider, status: moved.status }, { provider: 'log', status: 'PENDING' }, 'refused by http, sent through log');
    await ok({ name: 'routes.remove', channel: 'sms', destination: '+234806' });
  });

  it('a weighted route sends each verification first through the provider drawn for it, and fails over to the others', async () => {
    const token = await h.token();
    await ok({ name: 'routes.set', channel: 'sms', destination: '+234807', providers: ['http', 'log'], weights: [0, 100] });
    for (let i = 0; i < 3; i++) assert.equal((await sentThrough(token, number('7'))).provider, 'log', 'weight 0: http is never first');
    await ok({ name: 'routes.set', channel: 'sms', destination: '+234807', providers: ['log', 'http'], weights: [0, 1] });
    const barred = number('7');
    refusing.add(`+234${barred.slice(1)}`);
    const moved = await sentThrough(token, barred);
    assert.deepEqual({ provider: moved.provider, status: moved.status }, { provider: 'log', status: 'PENDING' }, 'drawn http refused it: log, next in the route, took it');
    const listed = (await ok({ name: 'routes.list' })) as RouteView[];
    assert.deepEqual(listed.find((r) => r.destination === '+234807')?.weights, [0, 1]);
    const r = await admin({ name: 'routes.set', channel: 'sms', destination: '+234807', providers: ['log', 'http'], weights: [100] });
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.error, /one weight a provider: 2 for log,http, not 1/);
    await ok({ name: 'routes.remove', channel: 'sms', destination: '+234807' });
  });

  it('lists routes and each channel setting they do not replace; refuses what it cannot route, naming why', async () => {
    await ok({ name: 'routes.set', channel: 'SMS', destination: '+234 809', providers: ['LOG', 'http'] });
    const listed = (await ok({ name: 'routes.list' })) as RouteView[];
    assert.deepEqual(
      listed.map(({ channel, destination, providers, source }) => ({ channel, destination, providers, source })),
      [
        { channel: 'sms', destination: '+234809', providers: ['log', 'http'], source: 'route' },
        { channel: 'sms', destination: 'default', providers: ['http', 'log'], source: 'settings' },
      ],
    );
    assert.deepEqual(
      { weights: listed[0]?.weights, failoverAfterSeconds: listed[0]?.failoverAfterSeconds, policy: listed[0]?.policy },
      { weights: null, failoverAfterSeconds: null, policy: 'ordered' },
    );
    const refusals: [AdminCommand, RegExp][] = [
      [{ name: 'routes.set', channel: 'sms', destination: 'NG', providers: ['twilio'] }, /twilio is not configured for sms here \(configured: http, log\)/],
      [{ name: 'routes.set', channel: 'call', destination: 'NG', providers: ['log'] }, /log is not configured for call here \(configured: none\)/],
      [{ name: 'routes.set', channel: 'fax', destination: 'NG', providers: ['log'] }, /channel is sms, call, whatsapp, voice, telegram, not "fax"/],
      [{ name: 'routes.set', channel: 'sms', destination: 'NGA', providers: ['log'] }, /destination is a country \(NG\).*not "NGA"/],
      [{ name: 'routes.set', channel: 'sms', destination: 'NG', providers: ['log', 'LOG'] }, /log is named twice/],
      [{ name: 'routes.set', channel: 'sms', destination: 'NG', providers: [' '] }, /at least one provider/],
      [{ name: 'routes.remove', channel: 'sms', destination: 'GH' }, /there is no sms route for GH/],
    ];
    for (const [command, pattern] of refusals) {
      const r = await admin(command);
      assert.equal(r.ok, false, JSON.stringify(command));
      if (!r.ok) assert.match(r.error, pattern);
    }
    assert.equal(((await ok({ name: 'routes.list' })) as RouteView[]).length, 2, 'nothing refused was saved');
    const audit = (await ok({ name: 'audit.list', limit: 50 })) as { action: string; target: string | null; outcome: string }[];
    assert.ok(audit.some((e) => e.action === 'routes.set' && e.target === 'SMS +234 809: LOG,http' && e.outcome === 'ok'));
    assert.ok(audit.some((e) => e.action === 'routes.set' && e.target === 'sms NG: twilio' && e.outcome.startsWith('refused: twilio is not configured')));
    await ok({ name: 'routes.remove', channel: 'sms', destination: '+234809' });
  });

  it("refuses a create whose route names no provider configured here (set by a process with other settings), 400 naming the channel; other numbers still go", async () => {
    // Another process, with Twilio configured, set it: this one has only http and log.
    await h.services.routeStore.set({ channel: 'sms', destination: 'GH', providers: ['twilio'], weights: null, failoverAfterSeconds: null, policy: 'ordered', updatedAt: h.clock.now() });
    await h.services.routesInForce.refresh();
    try {
      const token = await h.token();
      const refused = await h.call('POST', '/v1/otp/request', token, { countryCode: '+233', phoneNumber: '0241234567' });
      const body = expectV1Error(refused, 400, 'VALIDATION_ERROR');
      assert.deepEqual(body.error.details, [
        { field: 'type', issue: 'SEND_SMS to this number goes by the sms route for GH, and none of its providers (twilio) is configured here for sms' },
      ]);
      assert.equal((await sentThrough(token, number('5'))).provider, 'http', 'a number of another route still goes');
    } finally {
      await h.services.routeStore.remove('sms', 'GH');
      await h.services.routesInForce.refresh();
    }
  });

  it('otp-service routes: set, list and remove; a provider not configured in its own settings exits 2 and changes nothing', async () => {
    const dataDir = kind === 'pglite' ? embeddedDataDir('otp-routes-cli-') : null;
    const where: Record<string, string> = dataDir ? { DATA_DIR: dataDir } : { DATABASE_URL: String(h.config.DATABASE_URL) };
    const cliEnv = { LOG_LEVEL: 'silent', ...where, ...env };
    try {
      const set = await runCommand(['routes', 'set', 'sms', 'ng', 'log,http'], cliEnv);
      assert.equal(set.code, 0, set.stderr);
      assert.equal(set.stdout, 'added: sms to NG through log, then http\n');
      const table = await runCommand(['routes', 'list'], cliEnv);
      assert.equal(table.stdout, "CHANNEL\tDESTINATION\tPROVIDERS\tWEIGHTS\tFAILOVER AFTER\nsms\tNG\tlog,http\t-\t-\t\nsms\tdefault\thttp,log\t-\t-\t(the channel's provider setting)\n");
      const weighted = await runCommand(['routes', 'set', 'sms', 'ng', 'log,http', '--weights', '80,20'], cliEnv);
      assert.equal(weighted.stdout, 'updated: sms to NG through log, http, the first drawn by weights 80,20, then the others in order\n');
      const failover = await runCommand(['routes', 'set', 'sms', 'ng', 'http,log', '--failover-after', '20'], cliEnv);
      assert.equal(failover.stdout, 'updated: sms to NG through http, then log; a code not delivered 20 s after a provider took it goes once through the next\n');
      const withFailover = JSON.parse((await runCommand(['routes', 'list', '--json'], cliEnv)).stdout) as RouteView[];
      assert.equal(withFailover.find((r) => r.destination === 'NG')?.failoverAfterSeconds, 20);
      for (const [args, pattern] of [
        [['http,log', '--failover-after', 'soon'], /--failover-after takes whole seconds/],
        [['http,log', '--failover-after', '0'], /--failover-after is whole seconds from 1 to 3600/],
        [['http', '--failover-after', '20'], /--failover-after needs a second provider/],
      ] as const) {
        const refused = await runCommand(['routes', 'set', 'sms', 'ng', ...args], cliEnv);
        assert.equal(refused.code, 2, refused.stderr);
        assert.match(refused.stderr, pattern);
      }
      const best = await runCommand(['routes', 'set', 'sms', 'ng', 'log,http', '--policy', 'best'], cliEnv);
      assert.equal(best.stdout, "updated: sms to NG through log, http, the first drawn by the last hour's delivered and verified shares (the best, each other at least 5 %), then the others in order\n");
      // Nothing sent on the route in the last hour: both at a half, the tie to the first, the other at its floor.
      assert.equal(
        (await runCommand(['routes', 'list'], cliEnv)).stdout,
        "CHANNEL\tDESTINATION\tPROVIDERS\tWEIGHTS\tFAILOVER AFTER\nsms\tNG\tlog,http\tbest\t-\t\n" +
          '  log: 95 % of first sends (best): 0 sent in the last hour, 0 delivered, 0 verified; score 0.500\n' +
          '  http: 5 % of first sends (floor): 0 sent in the last hour, 0 delivered, 0 verified; score 0.500\n' +
          "sms\tdefault\thttp,log\t-\t-\t(the channel's provider setting)\n",
      );
      for (const [args, pattern] of [
        [['log,http', '--policy', 'best', '--weights', '50,50'], /--policy best draws its own shares .* it takes no --weights/],
        [['log', '--policy', 'best'], /--policy best needs a second provider/],
        [['log,http', '--policy', 'fastest'], /--policy is ordered or best, not "fastest"/],
      ] as const) {
        const refused = await runCommand(['routes', 'set', 'sms', 'ng', ...args], cliEnv);
        assert.equal(refused.code, 2, refused.stderr);
        assert.match(refused.stderr, pattern);
      }
      const badWeight = await runCommand(['routes', 'set', 'sms', 'ng', 'log,http', '--weights', '80,x'], cliEnv);
      assert.equal(badWeight.code, 2);
      assert.match(badWeight.stderr, /--weights takes whole numbers/);
      const wrongCount = await runCommand(['routes', 'set', 'sms', 'ng', 'log,http', '--weights', '80'], cliEnv);
      assert.equal(wrongCount.code, 2);
      assert.match(wrongCount.stderr, /one weight a provider/);
      const notHere = await runCommand(['routes', 'set', 'sms', 'GH', 'http'], { LOG_LEVEL: 'silent', ...where, SMS_PROVIDER: 'log' });
      assert.equal(notHere.code, 2, notHere.stderr);
      assert.match(notHere.stderr, /http is not configured for sms here \(configured: log\)/);
      const usage = await runCommand(['routes', 'set', 'sms', 'GH'], cliEnv);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /routes takes list, set CHANNEL DESTINATION PROVIDER/);
      const json = JSON.parse((await runCommand(['routes', 'list', '--json'], cliEnv)).stdout) as RouteView[];
      assert.deepEqual(json.map((r) => r.destination), ['NG', 'default'], 'the refused GH route was not saved');
      const removed = await runCommand(['routes', 'remove', 'sms', 'NG'], cliEnv);
      assert.equal(removed.stdout, 'removed the sms route for NG\n');
    } finally {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('routes are kept per channel', () => {
  it('a route of one channel never changes another', async () => {
    const h = await createHarness('pglite', { env: { SMS_PROVIDER: 'log', CALL_PROVIDER: 'log' } });
    try {
      const deps = adminDeps(h.services);
      const set = await runAudited(deps, 'cli', { name: 'routes.set', channel: 'call', destination: 'NG', providers: ['log'] });
      assert.ok(set.ok);
      const listed = await runAudited(deps, 'cli', { name: 'routes.list' });
      assert.ok(listed.ok);
      assert.deepEqual(
        (listed.value as RouteView[]).map((r) => `${r.channel} ${r.destination} ${r.source}`),
        ['sms default settings', 'call NG route', 'call default settings'],
      );
    } finally {
      await h.close();
    }
  });
});
