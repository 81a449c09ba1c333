import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/store/database.js';
import { ExposedDataFolderError } from '../../src/store/private-folder.js';
import { built, runNode } from '../support/processes.js';

/**
 * The embedded database's folder holds the token signing key (an unprivileged local user read it from a WAL file
 * PGlite had written 0666 in a 0755 folder, and signed tokens with it): the folder and everything in it are the
 * service user's alone, whatever the umask, and a start on a folder others can open refuses, naming it.
 */
describe('the embedded data folder', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-data-folder-'));
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  /** Every path under `dir` whose mode is not 0700 (folders) or 0600 (files), with its mode. */
  function notPrivate(dir: string): string[] {
    const found: string[] = [];
    const walk = (p: string) => {
      const stat = fs.lstatSync(p);
      if (stat.isSymbolicLink()) return;
      const want = stat.isDirectory() ? 0o700 : 0o600;
      if ((stat.mode & 0o777) !== want) found.push(`${path.relative(dir, p) || '.'} ${(stat.mode & 0o777).toString(8)}`);
      if (stat.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    };
    walk(dir);
    return found;
  }

  it('is made 0700 with its files 0600 while written to and when closed, even under umask 000', async () => {
    const dataDir = path.join(base, 'new', 'data');
    const umask = process.umask(0);
    try {
      const db = await openDatabase({ databaseUrl: undefined, dataDir, poolSize: 1, timeoutMs: 60_000 });
      try {
        await sql`CREATE TABLE scratch (n int)`.execute(db.db);
        await sql`INSERT INTO scratch SELECT generate_series(1, 1000)`.execute(db.db);
        // While open: the folders are closed to others whatever PGlite writes in them.
        const open = fs.statSync(dataDir).mode & 0o777;
        assert.equal(open.toString(8), '700');
        assert.equal((fs.statSync(path.join(dataDir, 'pglite')).mode & 0o777).toString(8), '700');
      } finally {
        await db.close();
      }
    } finally {
      process.umask(umask);
    }
    assert.deepEqual(notPrivate(dataDir), []);
    assert.ok(fs.readdirSync(path.join(dataDir, 'pglite', 'pg_wal')).length > 0, 'the database was written');
  });

  it('refuses a folder others can open, naming it, and writes nothing in it', async () => {
    const dataDir = path.join(base, 'shared');
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    await assert.rejects(
      openDatabase({ databaseUrl: undefined, dataDir, poolSize: 1, timeoutMs: 60_000 }),
      (err: unknown) => err instanceof ExposedDataFolderError && err.folder === dataDir && err.message.includes(`chmod -R go-rwx ${dataDir}`),
    );
    assert.deepEqual(fs.readdirSync(dataDir), []);
  });

  it('is refused by a production start, which says why and how to close it', async () => {
    const dataDir = path.join(base, 'production');
    fs.mkdirSync(dataDir, { mode: 0o750 });
    fs.chmodSync(dataDir, 0o750);
    const env = {
      NODE_ENV: 'production',
      SMS_PROVIDER: 'smpp',
      SMPP_URL: 'smpp://otp:secret@127.0.0.1:9',
      PUBLIC_BASE_URL: 'https://otp.example.org',
      DATA_DIR: dataDir,
      PORT: '0',
    };
    // A server that started would run until killed: 60 s is far more than a refusal takes on a busy machine.
    const ran = await runNode([built('main')], env, undefined, undefined, 60_000);
    assert.equal(ran.code, 1, `refused: ${ran.stderr}`);
    assert.match(ran.stderr, new RegExp(`DATA_DIR ${dataDir} can be opened by other users \\(mode 0750\\)`));
    assert.match(ran.stderr, /chmod -R go-rwx/);
    assert.deepEqual(fs.readdirSync(dataDir), []);
  });
});
