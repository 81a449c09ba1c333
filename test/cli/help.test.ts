import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../support/processes.js';
import { embeddedDataDir } from '../support/databases.js';

const subcommands: Record<string, readonly string[]> = {
  clients: ['create', 'list', 'disable', 'rotate-secret', 'rotate-webhook-secret'],
  webhooks: ['list', 'show', 'replay'],
  stats: [],
  messages: [],
  worker: [],
};

describe('otp-service --help', () => {
  // Help needs no database: a folder that does not exist shows that none is opened.
  const env = { DATA_DIR: path.join(os.tmpdir(), 'otp-help-never-created') };

  it('prints the usage of every command on stdout and exits 0, as -h, --help and help', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const ran = await runCli(args, env);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stderr, '');
      assert.match(ran.stdout, /^usage: otp-service <command>/);
      for (const [group, actions] of Object.entries(subcommands)) {
        for (const action of actions.length > 0 ? actions : ['']) {
          assert.match(ran.stdout, new RegExp(`^  ${group}${action ? ` ${action}` : ''}\\b`, 'm'), `${group} ${action}`);
        }
      }
    }
    assert.ok(!fs.existsSync(env.DATA_DIR));
  });

  it('prints the help of each group and each subcommand', async () => {
    for (const [group, actions] of Object.entries(subcommands)) {
      const ran = await runCli([group, '--help'], env);
      assert.equal(ran.code, 0, `${group}: ${ran.stderr}`);
      assert.match(ran.stdout, new RegExp(`^usage: otp-service ${group}\\b`));
      for (const action of actions) {
        const one = await runCli([group, action, '--help'], env);
        assert.equal(one.code, 0, `${group} ${action}: ${one.stderr}`);
        assert.match(one.stdout, new RegExp(`^usage: otp-service ${group} ${action}\\b`));
        // A sentence about what it does, not just the synopsis.
        assert.ok(one.stdout.split('\n')[2]?.length, one.stdout);
      }
    }
    const create = await runCli(['clients', 'create', '--help'], env);
    assert.match(create.stdout, /otp:send otp:verify lookup:request lookup:status deposit:request one-time-password-sms:send-validate/);
  });

  it('names an unknown option and where help is, without Node\'s parser text', async () => {
    const ran = await runCli(['clients', 'list', '--bogus'], env);
    assert.equal(ran.code, 2);
    assert.equal(ran.stderr, 'unknown or incomplete option --bogus; see otp-service clients --help\n');
    const top = await runCli(['--frobnicate'], env);
    assert.equal(top.code, 2);
    assert.match(top.stderr, /^unknown or incomplete option --frobnicate; see otp-service --help\n$/);
  });
});

describe('otp-service clients: list header and a mistyped scope', () => {
  let dir: string;
  before(() => {
    dir = embeddedDataDir('otp-clients-');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('names the mistyped scope and the valid ones', async () => {
    const ran = await runCli(['clients', 'create', '--name', 'shop', '--scopes', 'otp:send otp:verfy'], { DATA_DIR: dir });
    assert.equal(ran.code, 1);
    assert.equal(
      ran.stderr,
      `otp-service: database: embedded, in ${dir}\n` +
        'error: unknown scope "otp:verfy"; --scopes takes some of: otp:send otp:verify lookup:request lookup:status deposit:request one-time-password-sms:send-validate\n',
    );
  });

  it('lists clients under a header', async () => {
    const created = await runCli(['clients', 'create', '--name', 'shop', '--scopes', 'otp:send'], { DATA_DIR: dir });
    assert.equal(created.code, 0, created.stderr);
    const ran = await runCli(['clients', 'list'], { DATA_DIR: dir });
    assert.equal(ran.code, 0, ran.stderr);
    const [header, row, ...rest] = ran.stdout.trimEnd().split('\n');
    assert.equal(header, 'CLIENT_ID\tSTATUS\tNAME\tSCOPES\tCREATED');
    assert.match(row ?? '', /^[0-9a-f-]{36}\tactive\tshop\totp:send\t\d{4}-/);
    assert.deepEqual(rest, []);
  });
});
