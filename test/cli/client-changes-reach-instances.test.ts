import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { freshDatabase, postgresSkip, type TestDatabase } from '../support/databases.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/processes.js';

/**
 * Contract 2, 4 and 9: a client change made by the CLI, run as an operator runs it (its own process, from another
 * working directory, exiting as soon as it is done), reaches every running instance on PostgreSQL within 2 s.
 * Each check first makes both instances read the client, so that what they hold is the state before the change.
 */
const reachWithinMs = 2_000;

interface Created {
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
}

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('client changes made by the CLI reach two running instances within 2 s (PostgreSQL)', { skip: postgresSkip }, () => {
  let db: TestDatabase;
  let elsewhere: string;
  let servers: ServerProcess[] = [];
  let receiver: http.Server;
  let hookUrl = '';
  const deliveries: Delivery[] = [];
  let nextNumber = 1_000_000;

  const cli = async (...args: string[]): Promise<string> => {
    const ran = await runCli(args, db.env, elsewhere);
    assert.equal(ran.code, 0, `${args.join(' ')}: ${ran.stderr}`);
    return ran.stdout;
  };
  const newClient = async (): Promise<Created> =>
    JSON.parse(await cli('clients', 'create', '--name', 'shop', '--scopes', 'otp:send otp:verify', '--json')) as Created;
  const tokenAnswer = (url: string, c: Created, secret = c.clientSecret): Promise<Response> =>
    fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: secret }),
    });
  const token = async (url: string, c: Created): Promise<string> => {
    const res = await tokenAnswer(url, c);
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const api = async (url: string, bearer: string, method: string, route: string, body?: object): Promise<Response> =>
    fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body && { 'content-type': 'application/json' }) },
      ...(body && { body: JSON.stringify(body) }),
    });
  const create = async (url: string, bearer: string, extra: object = {}): Promise<{ id: string; otp: string | null }> => {
    // A thousand apart: each number in its own prefix, clear of prefix velocity (contract 10).
    nextNumber += 1000;
    const res = await api(url, bearer, 'POST', '/v1/otp/request', { countryCode: '+234', phoneNumber: `0803${nextNumber}`, ...extra });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { data: { id: string; otp: string | null } }).data;
  };
  /** Waits until 2 s after the change: what must hold by then must hold now. */
  const untilDeadline = async (changedAt: number) => {
    const left = changedAt + reachWithinMs - Date.now();
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  };
  /** Retries `check` until it holds, failing if it still does not 2 s after the change. */
  const holdsWithin = async (changedAt: number, what: string, check: () => Promise<boolean>) => {
    for (;;) {
      if (await check()) return Date.now() - changedAt;
      assert.ok(Date.now() < changedAt + reachWithinMs, `${what}: not seen within ${reachWithinMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  before(async () => {
    db = await freshDatabase('postgres');
    elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-operator-'));
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        deliveries.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const env = { ...db.env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CLIENT_RATE_LIMIT_PER_SECOND: '0' };
    servers = [await startServerProcess(env), await startServerProcess(env)];
  });
  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
    await new Promise((r) => receiver.close(r));
    fs.rmSync(elsewhere, { recursive: true, force: true });
    await db.drop();
  });

  it('clients disable: the old token and the client secret stop working on both instances', async () => {
    const c = await newClient();
    const bearers = await Promise.all(servers.map((s) => token(s.url, c)));
    for (const [i, s] of servers.entries()) {
      assert.equal((await api(s.url, bearers[i] ?? '', 'GET', '/v1/otp/00000000-0000-4000-8000-000000000000')).status, 404);
    }
    await cli('clients', 'disable', c.clientId);
    const changedAt = Date.now();
    for (const [i, s] of servers.entries()) {
      await holdsWithin(changedAt, `instance ${i}: old token refused`, async () =>
        (await api(s.url, bearers[i] ?? '', 'GET', '/v1/otp/00000000-0000-4000-8000-000000000000')).status === 401,
      );
      await holdsWithin(changedAt, `instance ${i}: no new token`, async () => (await tokenAnswer(s.url, c)).status === 401);
    }
  });

  it('clients rotate-secret: the old secret gets no token on either instance', async () => {
    const c = await newClient();
    for (const s of servers) await token(s.url, c);
    const rotated = JSON.parse(await cli('clients', 'rotate-secret', c.clientId, '--json')) as Created;
    const changedAt = Date.now();
    for (const [i, s] of servers.entries()) {
      await holdsWithin(changedAt, `instance ${i}: old secret refused`, async () => (await tokenAnswer(s.url, c)).status === 401);
      assert.equal((await tokenAnswer(s.url, c, rotated.clientSecret)).status, 200);
    }
  });

  it('clients rotate-webhook-secret: webhooks from both instances are signed with the new secret', async () => {
    const c = await newClient();
    const bearers = await Promise.all(servers.map((s) => token(s.url, c)));
    const rotated = JSON.parse(await cli('clients', 'rotate-webhook-secret', c.clientId, '--json')) as Created;
    const changedAt = Date.now();
    await untilDeadline(changedAt);
    for (const [i, s] of servers.entries()) {
      const v = await create(s.url, bearers[i] ?? '', { webhookUrl: hookUrl });
      assert.equal((await api(s.url, bearers[i] ?? '', 'POST', `/v1/otp/${v.id}/cancel`)).status, 200);
      let got: Delivery | undefined;
      for (const end = Date.now() + 10_000; !got && Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
        got = deliveries.find((d) => d.body.includes(v.id));
      }
      assert.ok(got, `instance ${i}: no webhook`);
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, x]) => [k, String(x)]));
      assert.doesNotThrow(() => new Webhook(rotated.webhookSecret).verify(got.body, headers), `instance ${i}: not signed with the new secret`);
    }
  });

  it('clients update --reveal-code false: verifications made on both instances withhold the code', async () => {
    const c = await newClient();
    const bearers = await Promise.all(servers.map((s) => token(s.url, c)));
    const made = await Promise.all(servers.map((s, i) => create(s.url, bearers[i] ?? '')));
    assert.ok(made.every((v) => v.otp !== null));
    await cli('clients', 'update', c.clientId, '--reveal-code', 'false');
    const changedAt = Date.now();
    await untilDeadline(changedAt);
    for (const [i, s] of servers.entries()) {
      assert.equal((await create(s.url, bearers[i] ?? '')).otp, null, `instance ${i}: code shown`);
    }
  });

  it('clients templates set: both instances send the new text', async () => {
    const c = await newClient();
    const bearers = await Promise.all(servers.map((s) => token(s.url, c)));
    await Promise.all(servers.map((s, i) => create(s.url, bearers[i] ?? '')));
    await cli('clients', 'templates', 'set', c.clientId, '--locale', 'en', 'Shop code {code}, valid {minutes} min');
    const changedAt = Date.now();
    await untilDeadline(changedAt);
    for (const [i, s] of servers.entries()) {
      const v = await create(s.url, bearers[i] ?? '', { locale: 'en' });
      const messages = await cli('messages', '--json');
      const sent = messages
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { verificationId: string; text?: string })
        .find((m) => m.verificationId === v.id);
      assert.ok(sent, `instance ${i}: no message stored`);
      assert.match(sent.text ?? '', /^Shop code \d{6}, valid 10 min/, `instance ${i}: ${sent.text ?? ''}`);
    }
  });

  it('clients test-numbers add: both instances honour the fixed code', async () => {
    const c = await newClient();
    const bearers = await Promise.all(servers.map((s) => token(s.url, c)));
    await Promise.all(servers.map((s, i) => create(s.url, bearers[i] ?? '')));
    await cli('clients', 'test-numbers', 'add', c.clientId, '+2348000000001', '--code', '424242');
    const changedAt = Date.now();
    await untilDeadline(changedAt);
    for (const [i, s] of servers.entries()) {
      const res = await api(s.url, bearers[i] ?? '', 'POST', '/v1/otp/request', { countryCode: '+234', phoneNumber: '08000000001' });
      assert.equal(res.status, 200, await res.clone().text());
      const v = ((await res.json()) as { data: { id: string } }).data;
      const verified = await api(s.url, bearers[i] ?? '', 'POST', '/v1/otp/verify', { id: v.id, otp: '424242' });
      assert.equal(verified.status, 200, `instance ${i}: ${await verified.text()}`);
    }
  });

  it('the CLI from another directory left nothing there', () => {
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });
});
