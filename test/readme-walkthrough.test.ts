import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot, startServerProcess, type ServerProcess } from './support/processes.js';

/**
 * Issue 17: the README's curl walk-through, run as written (bash, curl, the CLI) against a server started as its
 * terminal 1 says, with this run's addresses put in for 3000 and 4000. It must work twice in a row (the fixed
 * Idempotency-Key made the second run a 409), and its `json` helper must show an error rather than an empty value.
 */
const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## From token to verified, with curl'));
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
const steps = blocks[1] ?? '';

function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, ...env }, cwd: os.tmpdir() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe("the README's walk-through, run as written", () => {
  let dir: string;
  let server: ServerProcess;
  let receiver: http.Server;
  const hooks: string[] = [];
  let script = '';

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-walk-'));
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        hooks.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    // Terminal 1 of the README, with its cool-down off so that the walk-through can run twice in a row.
    server = await startServerProcess({ DATA_DIR: dir, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', PHONE_COOLDOWN_SECONDS: '0' });
    const id = /client_id:\s+(\S+)/.exec(server.output())?.[1] ?? '';
    const secret = /client_secret:\s+(\S+)/.exec(server.output())?.[1] ?? '';
    const bin = path.join(repoRoot, 'bin', 'otp-service.mjs');
    assert.ok(steps.includes('CLIENT_ID=...') && steps.includes('npx otp-service messages'), 'the steps are where this test looks');
    script = steps
      .replaceAll('http://127.0.0.1:3000', server.url)
      .replaceAll('127.0.0.1:4000', `127.0.0.1:${(receiver.address() as AddressInfo).port}`)
      .replace(/^CLIENT_ID=.*$/m, `CLIENT_ID=${id}`)
      .replace(/^CLIENT_SECRET=.*$/m, `CLIENT_SECRET=${secret}`)
      .replaceAll('npx otp-service', `node ${bin}`);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await new Promise((r) => receiver.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gets a token, creates, reads the code, verifies, and its webhook arrives; twice in a row', async () => {
    for (const run of [1, 2]) {
      const ran = await runBash(script, { DATA_DIR: dir });
      assert.equal(ran.code, 0, `run ${run}: ${ran.err}`);
      assert.match(ran.out, /"status":"SUCCESS"/, `run ${run}: ${ran.out}`);
      const deadline = Date.now() + 10_000;
      while (hooks.filter((h) => h.includes('action.otp.success')).length < run && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(hooks.filter((h) => h.includes('action.otp.success')).length, run, `run ${run}: webhook`);
    }
  });

  it('its json helper shows an error answer and fails, rather than printing nothing', async () => {
    const helper = /^json\(\) \{.*\}$/m.exec(steps)?.[0];
    assert.ok(helper, 'the helper is a one-line function');
    const ran = await runBash(`${helper}\necho '{"status":false,"message":"nope"}' | json data.id`, {});
    assert.notEqual(ran.code, 0);
    assert.match(ran.err, /"message":"nope"/);
    assert.equal(ran.out, '');
  });
});
