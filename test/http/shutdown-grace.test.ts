import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runCli, startServerProcess, type ServerProcess } from '../support/processes.js';
import { embeddedDataDir } from '../support/databases.js';

/**
 * Issue 18: SIGTERM took 32 s against a 10 s SHUTDOWN_GRACE_MS when a peer never answered (Kubernetes kills at
 * 30 s). The whole stop has one deadline: a provider that holds a send cannot keep the process past it.
 */
const graceMs = 3_000;

/** A client's token from a running server (the client made by the CLI). */
async function tokenFor(url: string, dir: string): Promise<{ token: string; client: { clientId: string; clientSecret: string } }> {
  const created = await runCli(['clients', 'create', '--name', 'shop', '--scopes', 'otp:send', '--json'], { DATA_DIR: dir });
  assert.equal(created.code, 0, created.stderr);
  const client = JSON.parse(created.stdout) as { clientId: string; clientSecret: string };
  return { token: await tokenOf(url, client), client };
}

async function tokenOf(url: string, c: { clientId: string; clientSecret: string }): Promise<string> {
  const res = await fetch(`${url}/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('SIGTERM with a provider that never answers a send', () => {
  let dir: string;
  let gateway: http.Server;
  let held = 0;
  let server: ServerProcess;

  before(async () => {
    dir = embeddedDataDir('otp-grace-');
    // An operator's gateway that takes each send and never answers it.
    gateway = http.createServer((req) => {
      held += 1;
      req.resume();
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    server = await startServerProcess({
      DATA_DIR: dir,
      SMS_PROVIDER: 'http',
      HTTP_GATEWAY_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/send`,
      HTTP_GATEWAY_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      PUBLIC_BASE_URL: 'https://otp.example.test',
      SHUTDOWN_GRACE_MS: String(graceMs),
    });
  });
  after(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await server.exited;
    gateway.closeAllConnections();
    await new Promise((r) => gateway.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('exits 0 within SHUTDOWN_GRACE_MS, saying what it left in flight', async () => {
    const { token } = await tokenFor(server.url, dir);
    const res = await fetch(`${server.url}/v1/otp/request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumber: '+2348031234567' }),
    });
    assert.equal(res.status, 200, await res.text());
    for (const end = Date.now() + 5_000; held === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    assert.equal(held, 1, 'the gateway holds the send');
    const stopped = Date.now();
    server.child.kill('SIGTERM');
    const code = await server.exited;
    const took = Date.now() - stopped;
    assert.equal(code, 0);
    // The grace, and a second and a half for a loaded machine's timers; the stop used to take 10 s and more here.
    assert.ok(took < graceMs + 1_500, `SIGTERM to exit took ${took} ms against SHUTDOWN_GRACE_MS ${graceMs}`);
    assert.match(server.output(), /SHUTDOWN_GRACE_MS is over: exiting with work still in flight/);
  });
});

/**
 * A dropped call is placed while the phone rings, so its provider may take up to CALL_RING_SECONDS + 5 s to answer,
 * longer than PROVIDER_TIMEOUT_MS. The stop used to wait an SMS's time-out for every send: a call still being placed
 * was abandoned unrecorded, and placed a second time once its claim ran out.
 */
describe('SIGTERM while a dropped call is being placed', () => {
  let dir: string;
  let gateway: http.Server;
  let calls = 0;
  let server: ServerProcess | undefined;
  const env = (): Record<string, string> => ({
    DATA_DIR: dir,
    CALL_PROVIDER: 'http',
    HTTP_GATEWAY_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/send`,
    HTTP_GATEWAY_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    PUBLIC_BASE_URL: 'https://otp.example.test',
    PROVIDER_TIMEOUT_MS: '1000',
    CALL_RING_SECONDS: '3',
    SEND_LEASE_MS: '9000',
    SHUTDOWN_GRACE_MS: '20000',
  });

  before(async () => {
    dir = embeddedDataDir('otp-grace-call-');
    // The gateway places the call and answers when the phone has rung: 3 s, past PROVIDER_TIMEOUT_MS and within
    // a call's time-out (CALL_RING_SECONDS + 5 s).
    gateway = http.createServer((req, res) => {
      calls += 1;
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString())).on('end', () => {
        const { verificationId } = JSON.parse(body) as { verificationId: string };
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `call-${verificationId}` })), 3_000);
      });
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    server = await startServerProcess(env());
  });
  after(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await server?.exited;
    gateway.closeAllConnections();
    await new Promise((r) => gateway.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("waits for the call's answer and records it, so the call is not placed again", async () => {
    const first = server!;
    const { client, token } = await tokenFor(first.url, dir);
    const res = await fetch(`${first.url}/v1/otp/request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumber: '+2348031234567', type: 'DROPPED_CALL' }),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const { data } = JSON.parse(text) as { data: { id: string } };
    for (const end = Date.now() + 5_000; calls === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    assert.equal(calls, 1, 'the gateway is placing the call');
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.doesNotMatch(first.output(), /send abandoned at shutdown/);

    // Started again, and past the send's claim (SEND_LEASE_MS): the call was recorded, so nothing places it again.
    const again = await startServerProcess(env());
    server = again;
    await new Promise((r) => setTimeout(r, 10_000));
    const read = await fetch(`${again.url}/v1/otp/${data.id}`, { headers: { authorization: `Bearer ${await tokenOf(again.url, client)}` } });
    const record = (await read.json()) as { data: { delivery: { status: string; provider: string } } };
    assert.equal(record.data.delivery.status, 'SENT');
    assert.equal(calls, 1, 'the call was placed once');
  });
});
