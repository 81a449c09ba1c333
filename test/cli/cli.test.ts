import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, postgresSkip, type TestDatabase, embeddedDataDir } from '../support/databases.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/processes.js';

interface Created {
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
  scopes: string[];
  status: string;
}

async function createClient(env: Record<string, string>, scopes = 'otp:send otp:verify'): Promise<Created> {
  const ran = await runCli(['clients', 'create', '--name', 'shop', '--scopes', scopes, '--json'], env);
  assert.equal(ran.code, 0, ran.stderr);
  return JSON.parse(ran.stdout) as Created;
}

async function tokenFrom(url: string, c: Created): Promise<Response> {
  return fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }),
  });
}

/** The CLI's client commands, checked on a database of each kind. */
function clientCommands(env: () => Record<string, string>): void {
  it('creates a client and prints its secrets once, as JSON', async () => {
    const c = await createClient(env());
    assert.match(c.clientId, /^[0-9a-f-]{36}$/);
    assert.match(c.clientSecret, /^cs_[A-Za-z0-9_-]{43}$/);
    assert.match(c.webhookSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(c.scopes, ['otp:send', 'otp:verify']);
    const listed = await runCli(['clients', 'list', '--json'], env());
    assert.equal(listed.code, 0, listed.stderr);
    const all = JSON.parse(listed.stdout) as Record<string, unknown>[];
    const mine = all.find((x) => x.clientId === c.clientId);
    assert.ok(mine);
    assert.equal(mine.status, 'active');
    assert.ok(!listed.stdout.includes(c.clientSecret), 'list never shows a secret');
    assert.ok(!('clientSecret' in mine) && !('secretHash' in mine));
  });

  it('disables a client and rotates a secret', async () => {
    const c = await createClient(env());
    const rotated = await runCli(['clients', 'rotate-secret', c.clientId, '--json'], env());
    assert.equal(rotated.code, 0, rotated.stderr);
    const r = JSON.parse(rotated.stdout) as Created;
    assert.notEqual(r.clientSecret, c.clientSecret);
    const disabled = await runCli(['clients', 'disable', c.clientId, '--json'], env());
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal((JSON.parse(disabled.stdout) as Created).status, 'disabled');
  });

  it('clients hooks keeps the signing key ZITADEL showed, given as an option or on stdin (-), and never prints it', async () => {
    const c = await createClient(env());
    const hooks = async (args: string[], input?: string) => {
      const ran = await runCli(['clients', 'hooks', c.clientId, ...args, '--json'], env(), undefined, input);
      assert.equal(ran.code, 0, ran.stderr);
      return { ran, value: JSON.parse(ran.stdout) as { zitadel: string; zitadelSigningKeySet: boolean } };
    };
    const first = await hooks([]);
    assert.match(first.value.zitadel, new RegExp(`/hooks/zitadel/sms/${c.clientId}$`));
    assert.equal(first.value.zitadelSigningKeySet, false);
    const fromStdin = await hooks(['--zitadel-signing-key', '-'], 'zItAdElKeY0123456789abcdef\n');
    assert.equal(fromStdin.value.zitadelSigningKeySet, true);
    assert.ok(!fromStdin.ran.stdout.includes('zItAdElKeY0123456789abcdef'));
    const asOption = await hooks(['--zitadel-signing-key', 'another-zitadel-key-0123456789']);
    assert.equal(asOption.value.zitadelSigningKeySet, true);
    const short = await runCli(['clients', 'hooks', c.clientId, '--zitadel-signing-key', 'short'], env());
    assert.equal(short.code, 2, short.stderr);
    assert.match(short.stderr, /zitadel-signing-key/);
    const cleared = await hooks(['--zitadel-signing-key', 'none']);
    assert.equal(cleared.value.zitadelSigningKeySet, false);
  });

  it('refuses bad input with a message and a non-zero exit', async () => {
    const unknownScope = await runCli(['clients', 'create', '--name', 'x', '--scopes', 'otp:all'], env());
    assert.equal(unknownScope.code, 1);
    assert.match(unknownScope.stderr, /scopes/);
    const missing = await runCli(['clients', 'disable', '00000000-0000-4000-8000-000000000000'], env());
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no client/);
    const usage = await runCli(['clients', 'explode'], env());
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /usage/);
  });

  it('lists prefix blocks (none yet), refuses to lift a prefix that is not blocked, and asks for the PREFIX', async () => {
    const listed = await runCli(['blocks', 'list'], env());
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout, 'no prefix is blocked, no country throttled\n');
    const lifted = await runCli(['blocks', 'lift', '+2348031234'], env());
    assert.equal(lifted.code, 1);
    assert.match(lifted.stderr, /no block in force on \+2348031234/);
    const bare = await runCli(['blocks', 'lift'], env());
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /blocks lift needs a PREFIX/);
  });
}

describe('otp-service CLI on the embedded database, no server running', () => {
  let dir: string;
  before(() => {
    dir = embeddedDataDir('otp-cli-');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  clientCommands(() => ({ DATA_DIR: dir }));
  // The commands' parsing and printing; what they do is checked on both databases in test/http/relays.test.ts.
  it('clients hooks: viewing makes no secret, --enable makes it, rotate-hook-secret replaces it, --disable turns the relays off', async () => {
    const env = { DATA_DIR: dir };
    const c = await createClient(env);
    const hooks = async (...args: string[]) => {
      const ran = await runCli(['clients', ...args], env);
      assert.equal(ran.code, 0, ran.stderr);
      return ran.stdout;
    };
    assert.match(await hooks('hooks', c.clientId), new RegExp(`relays: off .*clients hooks ${c.clientId} --enable`));
    const enabled = await hooks('hooks', c.clientId, '--enable');
    const secret = /hookSecret: (v1,whsec_\S+)/.exec(enabled)?.[1];
    assert.ok(secret, enabled);
    const rotated = await hooks('rotate-hook-secret', c.clientId);
    assert.match(rotated, /hookSecret: v1,whsec_/);
    assert.ok(!rotated.includes(secret));
    assert.match(rotated, /previousHookSecretExpiresAt: \d{4}-/);
    assert.match(await hooks('hooks', c.clientId, '--disable'), /relays: off/);
    const refused = await runCli(['clients', 'rotate-hook-secret', c.clientId], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /relays are off/);
    const both = await runCli(['clients', 'hooks', c.clientId, '--enable', '--disable'], env);
    assert.equal(both.code, 2);
  });
});

describe('otp-service CLI on PostgreSQL', { skip: postgresSkip }, () => {
  let db: TestDatabase;
  before(async () => {
    db = await freshDatabase('postgres');
  });
  after(() => db.drop());
  clientCommands(() => db.env);
});

describe('npm start on the embedded database, with the CLI alongside', () => {
  let dir: string;
  let server: ServerProcess;
  before(async () => {
    dir = embeddedDataDir('otp-srv-');
    server = await startServerProcess({ DATA_DIR: dir });
  });
  after(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints a development client on first start, and it can get a token', async () => {
    const out = server.output();
    const id = /client_id:\s+(\S+)/.exec(out)?.[1];
    const secret = /client_secret:\s+(\S+)/.exec(out)?.[1];
    assert.ok(id && secret, out);
    const res = await tokenFrom(server.url, { clientId: id, clientSecret: secret } as Created);
    assert.equal(res.status, 200);
    // The log lines never carry the secret: only the one-time banner does.
    const logLines = out.split('\n').filter((l) => l.startsWith('{'));
    assert.ok(logLines.every((l) => !l.includes(secret)));
  });

  it('reaches the running server through its admin socket', async () => {
    const c = await createClient({ DATA_DIR: dir });
    const res = await tokenFrom(server.url, c);
    assert.equal(res.status, 200);
    const disabled = await runCli(['clients', 'disable', c.clientId], { DATA_DIR: dir });
    assert.equal(disabled.code, 0, disabled.stderr);
    // The server that disabled the client forgets it at once.
    const again = await tokenFrom(server.url, c);
    assert.equal(again.status, 401);
  });

  it('answers health checks and stops cleanly on SIGTERM', async () => {
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.ok(!fs.existsSync(path.join(dir, 'admin.sock')), 'the admin socket is removed');
  });

  it('keeps its data across a restart and does not print a second development client', async () => {
    const again = await startServerProcess({ DATA_DIR: dir });
    try {
      assert.ok(!again.output().includes('client_secret'), again.output());
      const listed = await runCli(['clients', 'list', '--json'], { DATA_DIR: dir });
      assert.equal((JSON.parse(listed.stdout) as unknown[]).length, 2);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });
});

describe('start-up settings', () => {
  it('fails fast, naming each bad variable', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-cfg-'));
    try {
      const ran = await runCli(['clients', 'list'], { DATA_DIR: dir, OTP_LENGTH: 'six', CALLER_ID_RANGES: '+1-+2' });
      assert.equal(ran.code, 2);
      assert.match(ran.stderr, /OTP_LENGTH/);
      assert.match(ran.stderr, /CALLER_ID_RANGES/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
