import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, postgresSkip, type TestDatabase } from '../support/databases.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/processes.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

/**
 * Contract 14 and 17: a list or route change made by the CLI, run as an operator runs it (its own process,
 * exiting once done), reaches both running instances on PostgreSQL within 2 s. Each check first makes both
 * instances answer a create as they did before the change. The instances send SMS through `log`, then an
 * operator's gateway (`http`, a local receiver here), so that a route shows in which one took a code.
 */
const reachWithinMs = 2_000;

describe('list changes made by the CLI reach two running instances within 2 s (PostgreSQL)', { skip: postgresSkip }, () => {
  let db: TestDatabase;
  let elsewhere: string;
  let servers: ServerProcess[] = [];
  let gateway: Receiver;
  let providers: Record<string, string> = {};
  let clientId = '';
  const bearers: string[] = [];
  let range = 1000 + (process.pid % 5000);

  const cli = async (...args: string[]): Promise<string> => {
    const ran = await runCli(args, { ...db.env, ...providers }, elsewhere);
    assert.equal(ran.code, 0, `${args.join(' ')}: ${ran.stderr}`);
    return ran.stdout;
  };
  const create = async (i: number, phoneNumber: string): Promise<{ status: number; body: { error?: { details?: unknown } } }> => {
    const res = await fetch(`${servers[i]?.url ?? ''}/v1/otp/request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearers[i] ?? ''}`, 'content-type': 'application/json' },
      body: JSON.stringify({ countryCode: '+234', phoneNumber }),
    });
    return { status: res.status, body: (await res.json()) as { error?: { details?: unknown } } };
  };
  /** Retries `check` until it holds, failing if it still does not 2 s after the change. */
  const holdsWithin = async (changedAt: number, what: string, check: () => Promise<boolean>) => {
    for (;;) {
      if (await check()) return;
      assert.ok(Date.now() < changedAt + reachWithinMs, `${what}: not seen within ${reachWithinMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const freshRange = () => {
    range += 1;
    return { local: (n: number) => `0803${range}${String(n).padStart(3, '0')}`, prefix: `+234803${range}` };
  };

  before(async () => {
    db = await freshDatabase('postgres');
    elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-operator-'));
    gateway = await startReceiver((req, res) => {
      const { verificationId } = JSON.parse(req.body) as { verificationId: string };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${verificationId}` }));
    });
    providers = { SMS_PROVIDER: 'log,http', HTTP_GATEWAY_URL: gateway.url, HTTP_GATEWAY_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, PUBLIC_BASE_URL: 'https://otp.example.test' };
    const env = { ...db.env, ...providers, CLIENT_RATE_LIMIT_PER_SECOND: '0', PHONE_COOLDOWN_SECONDS: '30' };
    servers = [await startServerProcess(env), await startServerProcess(env)];
    const c = JSON.parse(await cli('clients', 'create', '--name', 'shop', '--scopes', 'otp:send otp:verify', '--json')) as { clientId: string; clientSecret: string };
    clientId = c.clientId;
    for (const s of servers) {
      const res = await fetch(`${s.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }),
      });
      bearers.push(((await res.json()) as { access_token: string }).access_token);
    }
  });
  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    fs.rmSync(elsewhere, { recursive: true, force: true });
    await gateway.close();
    await db.drop();
  });

  it('lists block add and remove: both instances refuse, then admit, creates towards the prefix', async () => {
    const r = freshRange();
    for (const i of [0, 1]) assert.equal((await create(i, r.local(i))).status, 200);
    await cli('lists', 'block', 'add', r.prefix, '--note', 'pumping seen');
    let changedAt = Date.now();
    let n = 10;
    for (const i of [0, 1]) {
      await holdsWithin(changedAt, `instance ${i}: blocked`, async () => {
        const answer = await create(i, r.local((n += 1)));
        if (answer.status !== 403) return false;
        assert.deepEqual(answer.body.error?.details, [{ rule: 'blocked', value: r.prefix }, { factor: 'in_block_list', rule: 'lists', mode: 'enforce' }]);
        return true;
      });
    }
    const shown = JSON.parse(await cli('lists', 'show', '--json')) as { blocks: { value: string; clientId: string | null; note: string | null }[]; allows: unknown[] };
    assert.deepEqual(shown.blocks.map(({ value, clientId: c, note }) => ({ value, clientId: c, note })), [{ value: r.prefix, clientId: null, note: 'pumping seen' }]);
    assert.match(await cli('lists', 'show'), new RegExp(`block\\t\\${r.prefix}\\tevery client`));
    await cli('lists', 'block', 'remove', r.prefix);
    changedAt = Date.now();
    for (const i of [0, 1]) await holdsWithin(changedAt, `instance ${i}: unblocked`, async () => (await create(i, r.local((n += 1)))).status === 200);
  });

  it("lists allow add --client: both instances let the client's number past its cool-down", async () => {
    const r = freshRange();
    const number = r.local(1);
    assert.equal((await create(0, number)).status, 200);
    for (const i of [0, 1]) assert.equal((await create(i, number)).status, 429, 'the cool-down holds');
    await cli('lists', 'allow', 'add', `+234${number.slice(1)}`, '--client', clientId);
    const changedAt = Date.now();
    for (const i of [0, 1]) await holdsWithin(changedAt, `instance ${i}: allowed`, async () => (await create(i, number)).status === 200);
  });

  it('routes set and remove: both instances send the prefix through the route, then through the setting again', async () => {
    const r = freshRange();
    let n = 0;
    /** Whether a create on instance `i` to a number of the range went out through the gateway (else through the log). */
    const viaGateway = async (i: number): Promise<boolean> => {
      const created = await create(i, r.local((n += 1)));
      assert.equal(created.status, 200);
      const { id } = (created.body as { data: { id: string } }).data;
      const deadline = Date.now() + 5_000;
      for (;;) {
        const res = await fetch(`${servers[i]?.url ?? ''}/v1/otp/${id}`, { headers: { authorization: `Bearer ${bearers[i] ?? ''}` } });
        const { provider } = ((await res.json()) as { data: { delivery: { provider: string | null } } }).data.delivery;
        if (provider !== null) return provider === 'http';
        assert.ok(Date.now() < deadline, `instance ${i}: the code of ${id} reached no provider`);
        await new Promise((done) => setTimeout(done, 20));
      }
    };
    for (const i of [0, 1]) assert.equal(await viaGateway(i), false, 'no route: SMS_PROVIDER, log first');
    assert.match(await cli('routes', 'set', 'sms', r.prefix, 'http,log'), /added: sms to \+234803\d+ through http, then log/);
    let changedAt = Date.now();
    for (const i of [0, 1]) await holdsWithin(changedAt, `instance ${i}: routed through http`, () => viaGateway(i));
    await cli('routes', 'remove', 'sms', r.prefix);
    changedAt = Date.now();
    for (const i of [0, 1]) await holdsWithin(changedAt, `instance ${i}: back to the setting`, async () => !(await viaGateway(i)));
  });

  it('refuses a malformed value or command with a usage error and changes nothing', async () => {
    const bad = await runCli(['lists', 'block', 'add', '2348030'], db.env, elsewhere);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /\+ and the digits/);
    const usage = await runCli(['lists', 'deny', 'add', '+2348030'], db.env, elsewhere);
    assert.notEqual(usage.code, 0);
    assert.match(usage.stderr, /lists takes show/);
  });
});
