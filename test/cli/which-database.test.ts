import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, postgresSkip, type TestDatabase } from '../support/databases.js';
import { repoRoot, runCli } from '../support/processes.js';

/**
 * Issue 17: the CLI took its database from the working directory (`cd client && npx otp-service clients list`
 * said "No clients" and made client/data/), never said which it used, and rebuilt dist/ under a running server.
 */
describe('which database the CLI works on', () => {
  let elsewhere: string;
  before(() => {
    elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-cwd-'));
  });
  after(() => fs.rmSync(elsewhere, { recursive: true, force: true }));

  it('by default, the embedded database beside the installed service, from any directory; it says so, and makes nothing where it runs', async () => {
    const ran = await runCli(['clients', 'list'], {}, elsewhere);
    const home = path.join(repoRoot, 'data');
    assert.match(ran.stderr, new RegExp(`embedded(,| database) in ${home.replace(/[/\\.]/g, '\\$&')}`));
    if (!fs.existsSync(home)) {
      assert.equal(ran.code, 1);
      assert.match(ran.stderr, /no embedded database in .*: start the server once \(npm start\)/);
      assert.ok(!fs.existsSync(home), 'a missing database is not made by a listing');
    }
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });

  it('a DATA_DIR that does not exist is refused with a message, not made empty', async () => {
    const missing = path.join(elsewhere, 'nothing-here');
    const ran = await runCli(['clients', 'list'], { DATA_DIR: missing });
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /no embedded database in .*nothing-here/);
    assert.ok(!fs.existsSync(missing));
  });

  it('names the PostgreSQL database it used, never its password', { skip: postgresSkip }, async () => {
    let db: TestDatabase | null = null;
    try {
      db = await freshDatabase('postgres');
      const url = new URL(db.env.DATABASE_URL ?? '');
      url.password = 'sekrit-pw';
      const ran = await runCli(['clients', 'list'], { DATABASE_URL: url.toString() }, elsewhere);
      assert.match(ran.stderr, new RegExp(`database: PostgreSQL (\\S+@)?${url.host}${url.pathname}`));
      assert.ok(!ran.stderr.includes('sekrit-pw') && !ran.stdout.includes('sekrit-pw'));
    } finally {
      await db?.drop();
    }
  });

  it('runs the last build with a warning when a source is newer, and never rebuilds it', async () => {
    const source = path.join(repoRoot, 'src', 'main.ts');
    const stamp = path.join(repoRoot, 'dist', '.build-stamp');
    const { atime, mtime } = fs.statSync(source);
    const builtAt = fs.statSync(stamp).mtimeMs;
    try {
      fs.utimesSync(source, new Date(), new Date(builtAt + 60_000));
      const ran = await runCli(['--help'], {}, elsewhere);
      const dir = fs.mkdtempSync(path.join(elsewhere, 'db-'));
      const listed = await runCli(['clients', 'list'], { DATA_DIR: dir }, elsewhere);
      assert.equal(ran.code, 0);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stderr, /warning: running the last build, which is out of date \(src\/main.ts changed\); `npm run build` rebuilds it/);
      assert.equal(fs.statSync(stamp).mtimeMs, builtAt, 'dist/ was not rebuilt');
    } finally {
      fs.utimesSync(source, atime, mtime);
    }
  });
});
