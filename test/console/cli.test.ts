import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { nextLocalNumber } from '../support/api.js';
import { startServerProcess, type ServerProcess } from '../support/processes.js';
import { runCommand } from '../support/command-line.js';
import { embeddedDataDir } from '../support/databases.js';

const origin = 'http://localhost:3999';

/**
 * The console's commands in the `otp-service` command itself (built, as installed), on the embedded database:
 * through the running server's admin socket, then on the database once the server stopped.
 */
describe('otp-service operators, audit, verifications, providers, stats --by-provider', () => {
  let dir: string;
  let server: ServerProcess;
  const env = () => ({ DATA_DIR: dir, CONSOLE: 'true', CONSOLE_ORIGIN: origin });

  before(async () => {
    dir = embeddedDataDir('otp-console-cli-');
    server = await startServerProcess(env());
  });
  after(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await server?.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('makes an operator whose link sets a password, and lists the audit log, through the running server', async () => {
    const made = await runCommand(['operators', 'create', '--email', 'cli@example.com'], env());
    assert.equal(made.code, 0, made.stderr);
    const link = /(http:\/\/localhost:3999\/console\/setup#[A-Za-z0-9_-]+)/.exec(made.stdout)?.[1];
    assert.ok(link, made.stdout);
    const listed = await runCommand(['operators', 'list', '--json'], env());
    const ops = JSON.parse(listed.stdout) as { email: string; hasPassword: boolean }[];
    assert.deepEqual(ops.map((o) => [o.email, o.hasPassword]), [['cli@example.com', false]]);
    const res = await fetch(`${server.url}/console/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ token: link.split('#')[1], password: 'twelve chars or more' }),
    });
    assert.equal(res.status, 200);
    const audit = await runCommand(['audit', '--json'], env());
    assert.equal(audit.code, 0, audit.stderr);
    const entries = JSON.parse(audit.stdout) as { actor: string; action: string; target: string | null; outcome: string }[];
    assert.deepEqual(
      entries.map((e) => [e.actor, e.action, e.target, e.outcome]),
      [
        ['operator:cli@example.com', 'console.set-password', null, 'ok'],
        ['cli', 'operators.create', 'cli@example.com', 'ok'],
      ],
    );
    const table = await runCommand(['audit', '--limit', '1'], env());
    assert.match(table.stdout, /^AT\tACTOR\tACTION\tTARGET\tOUTCOME\n\S+\toperator:cli@example.com\tconsole.set-password\t-\tok\n$/);
  });

  it('finds a verification, shows the providers and the stats by provider', async () => {
    const out = server.output();
    const id = /client_id:\s+(\S+)/.exec(out)?.[1];
    const secret = /client_secret:\s+(\S+)/.exec(out)?.[1];
    assert.ok(id && secret);
    const token = (
      (await (
        await fetch(`${server.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
        })
      ).json()) as { accessToken: string }
    ).accessToken;
    const local = nextLocalNumber();
    const created = await fetch(`${server.url}/v1/otp/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ countryCode: '+234', phoneNumber: local, reference: 'cli-ref-1' }),
    });
    const vid = ((await created.json()) as { data: { id: string } }).data.id;
    const found = await runCommand(['verifications', 'find', `+234${local.slice(1)}`], env());
    assert.equal(found.code, 0, found.stderr);
    assert.match(found.stdout, new RegExp(`^ID\\tCREATED.*\\n${vid}\\t`));
    const byRef = await runCommand(['verifications', 'find', 'cli-ref-1', '--json'], env());
    assert.deepEqual((JSON.parse(byRef.stdout) as { id: string }[]).map((v) => v.id), [vid]);
    const providers = await runCommand(['providers'], env());
    assert.match(providers.stdout, /^CHANNEL\tORDER\tPROVIDER\tCIRCUIT\tSENDS\tMEAN ANSWER\tDELIVERED \(24 h\)\tFAILED CALLS \(24 h\)\tLAST ERROR\nsms\t1\tlog\tclosed\t1\t\d+ ms\t0\/1\t0\t-\n/);
    const stats = await runCommand(['stats', '--by-provider'], env());
    assert.match(stats.stdout, /^CLIENT_ID\tDAY\tREGION\tCOUNTRY\tCHANNEL\tPROVIDER\tSENDS\tDELIVERED\tVERIFIED\tCOST\tPER VERIFIED\n\S+\t\S+\tNG\t\+234\tSMS\tlog\t1\t0\t0\t0\t-\n$/);

    // The console's voice preview is the CLI's too: what a call would say, nothing saved.
    const spoken = await runCommand(['clients', 'templates', 'preview', id, '--channel', 'voice', '--locale', 'fr', 'Bonjour, votre code est {code}.'], env());
    assert.equal(spoken.code, 0, spoken.stderr);
    assert.equal(spoken.stdout, `not saved. With the fr voice template a call says, VOICE_REPEAT times:\n\nBonjour, votre code est ${[...'999999'].join(', ')}.\n`);
    const voiceTemplates = await runCommand(['clients', 'templates', 'list', id, '--channel', 'voice', '--json'], env());
    assert.equal(voiceTemplates.stdout.trim(), '{}');

    // Erasing the person: through the running server's socket, said in the operator's words; the number is gone.
    const number = `+234${local.slice(1)}`;
    const erased = await runCommand(['erase', '--phone', number], env());
    assert.equal(erased.code, 0, erased.stderr);
    assert.equal(erased.stdout, `erased ${number.slice(0, -3)}XXX: 1 verification(s) (their numbers, codes, references and signals), 1 message(s) sent, 0 webhook event(s), 0 lookup(s); 0 list entries kept without a note\n`);
    const gone = await fetch(`${server.url}/v1/otp/${vid}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(gone.status, 404);
    const usage = await runCommand(['erase'], env());
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /erase needs --phone NUMBER/);
  });

  it('reads the audit log from the database once the server has stopped', async () => {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const audit = await runCommand(['audit', '--json', '--limit', '5'], env());
    assert.equal(audit.code, 0, audit.stderr);
    const entries = JSON.parse(audit.stdout) as { action: string; target: string | null }[];
    assert.equal(entries.length, 3, 'a preview is not a change; the erase is');
    assert.equal(entries[0]?.action, 'erase');
    assert.match(entries[0]?.target ?? '', /^\+234\d+XXX$/, 'the audit log keeps the erased number\'s prefix only');
  });
});
