import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { after, before, it } from 'node:test';
import { freshDatabase, type TestDatabase, embeddedDataDir } from '../support/databases.js';
import { forEachDatabase } from '../support/each-database.js';
import { startReceiver, waitFor, type Receiver } from '../webhooks/helpers.js';
import { kill, startServerChild, type ChildService } from '../webhooks/processes.js';
import { runCommand } from '../support/command-line.js';

/**
 * Contract 3.1 and 8: a code is never lost, even when the process dies between the provider taking the message
 * and the commit of that answer. The send is made again once its lease runs out, under the same id and
 * Idempotency-Key, so that a gateway that honours the key sends one SMS; a provider that cannot be told it is a
 * retry may send two (docs/sms.md).
 */
forEachDatabase('sending across a crash', (kind) => {
  let database: TestDatabase | null = null;
  let dataDir: string | null = null;
  let env: Record<string, string>;
  const children: ChildService[] = [];
  let gateway: Receiver;
  let first: (ChildService & { url: string }) | null = null;
  before(async () => {
    gateway = await startReceiver(async (req, res, i) => {
      const { id } = JSON.parse(req.body) as { id: string };
      if (i === 0 && first) {
        // The gateway has the message; the service dies before it hears so.
        await kill(first, 'SIGKILL');
        res.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${id}` }));
    });
    const base = {
      SMS_PROVIDER: 'http',
      HTTP_GATEWAY_URL: gateway.url,
      HTTP_GATEWAY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      PUBLIC_BASE_URL: 'https://otp.example.test',
      // Small, so that the crashed send's lease runs out quickly.
      PROVIDER_TIMEOUT_MS: '1000',
      SEND_LEASE_MS: '1500',
      CLIENT_RATE_LIMIT_PER_SECOND: '0',
    };
    if (kind === 'postgres') {
      database = await freshDatabase('postgres');
      env = { ...base, ...database.env };
    } else {
      dataDir = embeddedDataDir('otp-send-crash-');
      env = { ...base, DATA_DIR: dataDir };
    }
  });
  after(async () => {
    for (const c of children) await kill(c, 'SIGKILL');
    await gateway.close();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends the code again, under the same id and Idempotency-Key, after a SIGKILL mid-send', async () => {
    first = await startServerChild(env);
    children.push(first);
    const cli = await runCommand(['clients', 'create', '--name', 'crash', '--scopes', 'otp:send otp:verify', '--json'], env);
    assert.equal(cli.code, 0, cli.stderr);
    const client = JSON.parse(cli.stdout) as { clientId: string; clientSecret: string };
    const token = async (url: string) => {
      const res = await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }),
      });
      return ((await res.json()) as { accessToken: string }).accessToken;
    };
    const firstToken = await token(first.url);
    const created = await fetch(`${first.url}/v1/otp/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${firstToken}` },
      body: JSON.stringify({ countryCode: '+234', phoneNumber: '08012345678' }),
    });
    assert.equal(created.status, 200, await created.clone().text());
    const { data } = (await created.json()) as { data: { id: string } };
    await waitFor('the first process to die mid-send', () => first?.child.exitCode !== null || first.child.signalCode !== null, 15_000);

    const second = await startServerChild(env);
    children.push(second);
    await waitFor('the send to be made again after the lease', () => gateway.requests.length === 2, 20_000);
    const [lost, again] = gateway.requests;
    assert.ok(lost && again);
    assert.equal(again.headers['idempotency-key'], lost.headers['idempotency-key']);
    assert.equal(again.headers['webhook-id'], lost.headers['webhook-id']);
    assert.equal(JSON.parse(again.body).id, JSON.parse(lost.body).id);
    const secondToken = await token(second.url);
    await waitFor('the send to be recorded', async () => {
      const res = await fetch(`${second.url}/v1/otp/${data.id}`, { headers: { authorization: `Bearer ${secondToken}` } });
      const body = (await res.json()) as { data: { delivery: { status: string; provider: string; sends: number } } };
      return body.data.delivery.status === 'SENT' && body.data.delivery.provider === 'http' && body.data.delivery.sends === 1;
    });
    assert.equal(await kill(second, 'SIGTERM'), 0, 'a clean shutdown');
  });
});
