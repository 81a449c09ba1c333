import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createVerification, nextLocalNumber } from '../support/api.js';
import { postgresSkip, embeddedDataDir } from '../support/databases.js';
import { createHarness, type Harness } from '../support/harness.js';
import { repoRoot, runCli, startServerProcess, type ServerProcess } from '../support/processes.js';

interface Line {
  at: string;
  channel: string;
  to: string;
  from: string;
  text?: string;
  callerId?: string;
  verificationId: string;
  provider: string;
  testNumber: boolean;
}

const smsKeys = ['at', 'channel', 'from', 'provider', 'testNumber', 'text', 'to', 'verificationId'];
const callKeys = ['at', 'callerId', 'channel', 'from', 'provider', 'testNumber', 'to', 'verificationId'];

function jsonLines(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Line);
}

/** `otp-service messages --follow` running, its stdout collected. */
interface Following {
  readonly child: ChildProcess;
  waitFor(match: (stdout: string) => boolean, ms?: number): Promise<string>;
  /** SIGINT, then its exit code. */
  stop(): Promise<number | null>;
}

function follow(args: readonly string[], env: Record<string, string>): Following {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'otp-service.mjs'), 'messages', '--follow', ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    async waitFor(match, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (!match(out)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`not printed in time; stdout: ${out}; stderr: ${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return out;
    },
    async stop() {
      child.kill('SIGINT');
      return exited;
    },
  };
}

describe('otp-service messages on the embedded database, with the server running and then not', () => {
  let dir: string;
  let server: ServerProcess;
  let token: string;
  const created: { id: string; otp: string; phoneNumber: string; type: string }[] = [];

  const create = async (type: string) => {
    const res = await fetch(`${server.url}/v1/otp/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ countryCode: '+234', phoneNumber: nextLocalNumber(), type }),
    });
    assert.equal(res.status, 200);
    const { data } = (await res.json()) as { data: { id: string; otp: string; phoneNumber: string; type: string } };
    created.push(data);
    return data;
  };

  before(async () => {
    dir = embeddedDataDir('otp-messages-');
    server = await startServerProcess({ DATA_DIR: dir });
    const out = server.output();
    const clientId = /client_id:\s+(\S+)/.exec(out)?.[1];
    const clientSecret = /client_secret:\s+(\S+)/.exec(out)?.[1];
    assert.ok(clientId && clientSecret, out);
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'otp:send otp:verify' }),
    });
    token = ((await res.json()) as { accessToken: string }).accessToken;
    await create('SEND_SMS');
    await create('DROPPED_CALL');
  });
  after(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints what was sent, oldest first, through the running server', async () => {
    const [sms, call] = created;
    assert.ok(sms && call);
    const ran = await runCli(['messages'], { DATA_DIR: dir });
    assert.equal(ran.code, 0, ran.stderr);
    const lines = ran.stdout.trim().split('\n');
    assert.equal(lines.length, 2, ran.stdout);
    assert.match(lines[0] ?? '', new RegExp(`SMS +to \\${sms.phoneNumber} .*${sms.otp} is your verification code.*\\[PENDING`));
    assert.match(lines[1] ?? '', new RegExp(`CALL +to \\${call.phoneNumber} from \\+\\d+${call.otp} \\(code ${call.otp}`));

    const json = await runCli(['messages', '--json'], { DATA_DIR: dir });
    const [first, second] = jsonLines(json.stdout);
    assert.ok(first && second);
    assert.deepEqual(Object.keys(first).sort(), smsKeys);
    assert.deepEqual(Object.keys(second).sort(), callKeys);
    assert.equal(first.verificationId, sms.id);
    assert.equal(first.provider, 'log');
    assert.equal(first.testNumber, false);
    assert.ok(first.text?.startsWith(sms.otp));
    assert.ok(second.callerId?.endsWith(call.otp));
    assert.equal(second.from, second.callerId);

    const one = await runCli(['messages', '--json', '--to', call.phoneNumber], { DATA_DIR: dir });
    assert.deepEqual(jsonLines(one.stdout).map((l) => l.verificationId), [call.id]);
    const bad = await runCli(['messages', '--to', '12345'], { DATA_DIR: dir });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--to must be a phone number/);
  });

  it('--follow prints new messages as they are sent, until interrupted', async () => {
    const following = follow(['--json'], { DATA_DIR: dir });
    try {
      await following.waitFor((out) => jsonLines(out).length === 2);
      const next = await create('SEND_SMS');
      const out = await following.waitFor((o) => o.includes(next.id));
      const lines = jsonLines(out);
      assert.equal(lines.length, 3, 'each message once');
      assert.equal(lines[2]?.verificationId, next.id);
    } finally {
      assert.equal(await following.stop(), 0);
    }
  });

  it('reads the database itself once the server has stopped', async () => {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const ran = await runCli(['messages', '--json'], { DATA_DIR: dir });
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(
      jsonLines(ran.stdout).map((l) => l.verificationId),
      created.map((c) => c.id),
    );
  });
});

describe('otp-service messages on PostgreSQL, beside a running service', { skip: postgresSkip }, () => {
  let h: Harness;
  let env: Record<string, string>;
  let token: string;
  before(async () => {
    h = await createHarness('postgres');
    env = { DATABASE_URL: String(h.config.DATABASE_URL) };
    token = await h.token();
  });
  after(() => h.close());

  it('prints what the service sent, and follows new ones', async () => {
    const sms = await createVerification(h, token);
    const call = await createVerification(h, token, { type: 'DROPPED_CALL' });
    await h.services.sendWorker.idle();
    const ran = await runCli(['messages', '--json'], env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(jsonLines(ran.stdout).map((l) => l.verificationId), [sms.id, call.id]);

    const following = follow([], env);
    try {
      await following.waitFor((out) => out.includes(call.id));
      const next = await createVerification(h, token);
      const out = await following.waitFor((o) => o.includes(next.id));
      assert.match(out, new RegExp(`SMS +to .*${next.otp} is your verification code`));
    } finally {
      assert.equal(await following.stop(), 0);
    }
  });
});
