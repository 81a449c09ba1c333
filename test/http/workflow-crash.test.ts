import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, it } from 'node:test';
import { freshDatabase, type TestDatabase, embeddedDataDir } from '../support/databases.js';
import { forEachDatabase } from '../support/each-database.js';
import { startReceiver, waitFor, type Receiver } from '../webhooks/helpers.js';
import { kill, startServerChild, type ChildService } from '../webhooks/processes.js';
import { runCommand } from '../support/command-line.js';

/** The seconds a step waits in these tests: long enough that no step can go out before the test has killed its server. */
const fallbackAfterSeconds = 3;

interface Sent {
  readonly channel: string;
  readonly verificationId: string;
  readonly text?: string;
}

/**
 * Contract 13: a workflow step that is due is never lost across a crash, and never sent twice by two instances on
 * one PostgreSQL. Real server processes; calls and SMS both go through the `http` provider to a local gateway that
 * accepts everything (the operator's gateway, whose fields test/providers/http-gateway.test.ts checks), so the test
 * sees every send. A step's clock starts when its call is accepted; the workers' step task (every 200 ms) sends it.
 */
forEachDatabase('workflow steps across crashes and instances', (kind) => {
  let database: TestDatabase | null = null;
  let dataDir: string | null = null;
  let env: Record<string, string>;
  const children: ChildService[] = [];
  let gateway: Receiver;
  before(async () => {
    gateway = await startReceiver((req, res) => {
      const { verificationId, channel } = JSON.parse(req.body) as Sent;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${channel}-${verificationId}` }));
    });
    const base = {
      SMS_PROVIDER: 'http',
      CALL_PROVIDER: 'http',
      HTTP_GATEWAY_URL: gateway.url,
      HTTP_GATEWAY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      PUBLIC_BASE_URL: 'https://otp.example.test',
      FALLBACK_AFTER_SECONDS: String(fallbackAfterSeconds),
      CLIENT_RATE_LIMIT_PER_SECOND: '0',
      PHONE_COOLDOWN_SECONDS: '0',
      PREFIX_LIMIT_COUNT: '0',
    };
    if (kind === 'postgres') {
      database = await freshDatabase('postgres');
      env = { ...base, ...database.env };
    } else {
      dataDir = embeddedDataDir('otp-workflow-crash-');
      env = { ...base, DATA_DIR: dataDir };
    }
  });
  after(async () => {
    for (const c of children) await kill(c, 'SIGKILL');
    await gateway.close();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const sends = (verificationId: string, channel: string): Sent[] =>
    gateway.requests.map((r) => JSON.parse(r.body) as Sent).filter((b) => b.verificationId === verificationId && b.channel === channel);
  const start = async () => {
    const child = await startServerChild(env);
    children.push(child);
    return child;
  };
  const client = async () => {
    const cli = await runCommand(['clients', 'create', '--name', 'workflow', '--scopes', 'otp:send otp:verify', '--json'], env);
    assert.equal(cli.code, 0, cli.stderr);
    return JSON.parse(cli.stdout) as { clientId: string; clientSecret: string };
  };
  const token = async (url: string, c: { clientId: string; clientSecret: string }) => {
    const res = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }),
    });
    return ((await res.json()) as { accessToken: string }).accessToken;
  };
  const create = async (url: string, bearer: string, phoneNumber: string) => {
    const res = await fetch(`${url}/v1/otp/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ countryCode: '+234', phoneNumber, type: 'DROPPED_CALL', fallback: ['SEND_SMS'] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { data: { id: string; otp: string } }).data;
  };
  const fetchRecord = async (url: string, bearer: string, id: string) => {
    const res = await fetch(`${url}/v1/otp/${id}`, { headers: { authorization: `Bearer ${bearer}` } });
    return ((await res.json()) as { data: { delivery: { channel: string; status: string }; fallback: string[] } }).data;
  };

  it('sends a step that fell due while the server was down once it is back (SIGKILL)', async () => {
    const first = await start();
    const c = await client();
    const firstToken = await token(first.url, c);
    const v = await create(first.url, firstToken, '08012340001');
    // The call is taken: the step's clock runs from now, and the server dies with the step still to come.
    await waitFor('the call to be recorded as sent', async () => (await fetchRecord(first.url, firstToken, v.id)).delivery.status === 'SENT');
    assert.equal(await kill(first, 'SIGKILL'), null);
    assert.deepEqual(sends(v.id, 'sms'), [], 'the step had not gone out before the crash');
    // The step falls due while no server runs.
    await new Promise((resolve) => setTimeout(resolve, fallbackAfterSeconds * 1000 + 500));
    const second = await start();
    await waitFor('the step to go out after the restart', () => sends(v.id, 'sms').length > 0, 20_000);
    const [sms] = sends(v.id, 'sms');
    assert.ok(sms?.text?.includes(v.otp), 'the same code');
    const secondToken = await token(second.url, c);
    await waitFor('the step to be recorded', async () => {
      const r = await fetchRecord(second.url, secondToken, v.id);
      return r.delivery.channel === 'SMS' && r.delivery.status === 'SENT' && r.fallback.length === 0;
    });
    assert.equal(sends(v.id, 'sms').length, 1);
    assert.equal(sends(v.id, 'call').length, 1);
    assert.equal(await kill(second, 'SIGTERM'), 0, 'a clean shutdown');
  });

  if (kind === 'postgres') {
    it('sends each due step once when two instances share the database', async () => {
      const [a, b] = await Promise.all([start(), start()]);
      const c = await client();
      const [tokenA, tokenB] = await Promise.all([token(a.url, c), token(b.url, c)]);
      // Half created on each instance; both instances' step tasks look for every due step.
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, i) => create(i % 2 === 0 ? a.url : b.url, i % 2 === 0 ? tokenA : tokenB, `080123410${String(i).padStart(2, '0')}`)),
      );
      await waitFor('every step to go out', () => created.every((v) => sends(v.id, 'sms').length > 0), 30_000);
      // Longer than a few rounds of both instances' step tasks: a second copy would have gone out by now.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      for (const v of created) {
        assert.equal(sends(v.id, 'sms').length, 1, `one SMS for ${v.id}`);
        assert.equal(sends(v.id, 'call').length, 1, `one call for ${v.id}`);
      }
      await Promise.all([kill(a, 'SIGTERM'), kill(b, 'SIGTERM')]);
    });
  }
});
