import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { migratedPGliteDump } from '../src/store/database.js';
import { findPostgresBin, startTempPostgres, type TempPostgres } from './temp-postgres.js';

/**
 * `npm test`: every test file under test/, on PGlite and on a real PostgreSQL. The server comes from
 * TEST_DATABASE_URL when given, else is started here in a temporary folder; with neither, the PostgreSQL
 * tests report themselves skipped.
 */
function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(path.join(dir, e.name)) : e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []))
    .sort();
}

async function main(): Promise<number> {
  const only = process.argv.slice(2);
  const files = only.length > 0 ? only : testFiles('test');
  let pg: TempPostgres | null = null;
  const env = { ...process.env };
  if (!env.TEST_DATABASE_URL) {
    if (findPostgresBin()) {
      pg = await startTempPostgres({ fsync: 'off', synchronous_commit: 'off' });
      env.TEST_DATABASE_URL = pg.url;
      process.stdout.write(`PostgreSQL for tests: ${pg.version} on port ${pg.port}\n`);
    } else {
      process.stdout.write('PostgreSQL not found and TEST_DATABASE_URL unset: PostgreSQL tests will be skipped\n');
    }
  }
  const templateFile = path.join(os.tmpdir(), `otp-pglite-template-${process.pid}.tar`);
  fs.writeFileSync(templateFile, Buffer.from(await (await migratedPGliteDump()).arrayBuffer()));
  env.PGLITE_TEMPLATE = templateFile;
  const stop = () => {
    pg?.stop();
    fs.rmSync(templateFile, { force: true });
  };
  process.on('SIGINT', () => {
    stop();
    process.exit(130);
  });
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], {
      stdio: 'inherit',
      env,
    });
    return await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  } finally {
    stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`test runner failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
