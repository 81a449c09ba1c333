import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import { after, before, it } from 'node:test';
import { freshDatabase, type TestDatabase, embeddedDataDir } from '../support/databases.js';
import { forEachDatabase } from '../support/each-database.js';
import { startReceiver, verifySignature, waitFor, type Receiver } from './helpers.js';
import { kill, runCliFromBuild, startChild, startServerChild, type ChildService } from './processes.js';
import { runCommand } from '../support/command-line.js';

interface Created {
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
}

/** Creates a client through the CLI, gets a token, and moves one verification to SUCCESS over HTTP. */
async function succeedOverHttp(
  env: Record<string, string>,
  url: string,
  webhookUrl: string,
): Promise<{ client: Created; verificationId: string }> {
  const cli = await runCommand(['clients', 'create', '--name', 'crash', '--scopes', 'otp:send otp:verify', '--json'], env);
  assert.equal(cli.code, 0, cli.stderr);
  const client = JSON.parse(cli.stdout) as Created;
  const tokenRes = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }),
  });
  assert.equal(tokenRes.status, 200);
  const { accessToken } = (await tokenRes.json()) as { accessToken: string };
  const call = async (p: string, body: unknown) => {
    const res = await fetch(`${url}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as { data: { id: string; otp: string } };
  };
  const created = await call('/v1/otp/request', { countryCode: '+234', phoneNumber: '08012345678', webhookUrl });
  await call('/v1/otp/verify', { id: created.data.id, otp: created.data.otp });
  return { client, verificationId: created.data.id };
}

forEachDatabase('webhooks across a crash', (kind) => {
  let database: TestDatabase | null = null;
  let dataDir: string | null = null;
  let env: Record<string, string>;
  const children: ChildService[] = [];
  const receivers: Receiver[] = [];
  before(async () => {
    const base = {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // Small, so that the crashed attempt's lease runs out quickly.
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_LEASE_MS: '4000',
      WEBHOOK_POLL_INTERVAL_MS: '200',
      CLIENT_RATE_LIMIT_PER_SECOND: '0',
    };
    if (kind === 'postgres') {
      database = await freshDatabase('postgres');
      env = { ...base, ...database.env };
    } else {
      dataDir = embeddedDataDir('otp-crash-');
      env = { ...base, DATA_DIR: dataDir };
    }
  });
  after(async () => {
    for (const c of children) await kill(c, 'SIGKILL');
    for (const r of receivers) await r.close();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers an event whose server was SIGKILLed mid-delivery after a restart, with the same webhook-id', async () => {
    const held: http.ServerResponse[] = [];
    const receiver = await startReceiver((_req, res, i) => {
      if (i === 0) held.push(res); // the first attempt hangs: it is in flight when the server dies
      else res.writeHead(200).end();
    });
    receivers.push(receiver);
    const first = await startServerChild(env);
    children.push(first);
    const { client, verificationId } = await succeedOverHttp(env, first.url, receiver.url);
    await waitFor('the first attempt to reach the receiver', () => receiver.requests.length === 1, 15_000);
    await kill(first, 'SIGKILL');

    const second = await startServerChild(env);
    children.push(second);
    await waitFor('the event to arrive again after the restart', () => receiver.requests.length === 2, 30_000);
    const [lost, delivered] = receiver.requests;
    assert.ok(lost && delivered);
    assert.equal(delivered.headers['webhook-id'], lost.headers['webhook-id']);
    assert.equal(delivered.body, lost.body);
    verifySignature(client.webhookSecret, lost);
    const body = verifySignature(client.webhookSecret, delivered) as { event: string; data: { id: string } };
    assert.equal(body.event, 'action.otp.success');
    assert.equal(body.data.id, verificationId);

    // The operator sees both attempts: the one the crash cut short, and the delivery.
    await waitFor('the delivery to be recorded', async () => {
      const listed = await runCommand(['webhooks', 'list', '--verification', verificationId, '--json'], env);
      assert.equal(listed.code, 0, listed.stderr);
      const [event] = JSON.parse(listed.stdout) as { deliveryStatus: string }[];
      return event?.deliveryStatus === 'delivered';
    });
    const shown = await runCommand(['webhooks', 'show', String(delivered.headers['webhook-id']), '--json'], env);
    assert.equal(shown.code, 0, shown.stderr);
    const detail = JSON.parse(shown.stdout) as { attempts: { attempt: number; outcome: string; statusCode: number | null }[] };
    assert.deepEqual(
      detail.attempts.map((a) => [a.attempt, a.outcome, a.statusCode]),
      [
        [1, 'interrupted', null],
        [2, 'delivered', 200],
      ],
    );
    const text = await runCommand(['webhooks', 'show', String(delivered.headers['webhook-id'])], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /#1\t.*\tinterrupted\t/);
    assert.match(text.stdout, /#2\t.*\tdelivered\tHTTP 200/);
    assert.equal(text.stdout.includes(client.webhookSecret), false);

    for (const res of held) res.destroy();
    assert.equal(await kill(second, 'SIGTERM'), 0, 'a clean shutdown');
    // The log names destinations by origin only, and never carries a signature.
    assert.equal(second.output().includes('webhook-signature'), false);
    assert.equal(second.output().includes('v1,'), false);
  });

  it(
    'runs delivery in a separate `otp-service worker` process',
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      const receiver = await startReceiver();
      receivers.push(receiver);
      const server = await startServerChild({ ...env, WEBHOOK_WORKER: 'false' });
      children.push(server);
      const worker = await startChild('cli/main', ['worker'], { ...env, LOG_LEVEL: 'info' }, 'otp-service worker running');
      children.push(worker);
      await succeedOverHttp(env, server.url, receiver.url);
      await waitFor('the worker process to deliver', () => receiver.requests.length === 1, 15_000);
      assert.equal(await kill(worker, 'SIGTERM'), 0);
      assert.equal(await kill(server, 'SIGTERM'), 0);
    },
  );

  it(
    'refuses to start a worker beside a server on the embedded database',
    { skip: kind === 'postgres' ? 'PostgreSQL takes any number of workers' : false },
    async () => {
      const server = await startServerChild(env);
      children.push(server);
      const worker = await runCliFromBuild(['worker'], env);
      assert.equal(worker.code, 1);
      assert.match(worker.stderr, /already running on this DATA_DIR/);
      assert.equal(await kill(server, 'SIGTERM'), 0);
    },
  );
});
