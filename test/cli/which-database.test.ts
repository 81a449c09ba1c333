import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, postgresSkip, withEmbeddedDatabase, type TestDatabase } from '../support/databases.js';
import { repoRoot, runCli, runNode } from '../support/processes.js';

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
    // On a copy of the installation (the command, its build, and what the build was made from, with their times),
    // so that the other test files' commands, which run this repository's build meanwhile, never see it stale.
    const install = path.join(elsewhere, 'install');
    for (const part of ['bin', 'dist', 'src', 'console', 'scripts/build-if-stale.mjs', 'scripts/build-console.mjs', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
      fs.cpSync(path.join(repoRoot, part), path.join(install, part), { recursive: true, preserveTimestamps: true });
    }
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(install, 'node_modules'));
    const source = path.join(install, 'src', 'main.ts');
    const stamp = path.join(install, 'dist', '.build-stamp');
    const builtAt = fs.statSync(stamp).mtimeMs;
    fs.utimesSync(source, new Date(), new Date(builtAt + 60_000));
    const command = path.join(install, 'bin', 'otp-service.mjs');
    const ran = await runNode([command, '--help'], {}, elsewhere);
    const dir = withEmbeddedDatabase(fs.mkdtempSync(path.join(elsewhere, 'db-')));
    const listed = await runNode([command, 'clients', 'list'], { DATA_DIR: dir }, elsewhere);
    assert.equal(ran.code, 0);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stderr, /warning: running the last build, which is out of date \(src\/main.ts changed\); `npm run build` rebuilds it/);
    assert.equal(fs.statSync(stamp).mtimeMs, builtAt, 'dist/ was not rebuilt');
  });
});
