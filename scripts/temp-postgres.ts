import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A PostgreSQL server started in a temporary folder for tests or benchmarks. */
export interface TempPostgres {
  /** URL of the `postgres` database as the superuser. */
  readonly url: string;
  readonly port: number;
  readonly version: string;
  /** The server's data folder (its postmaster.pid names the server's process). */
  readonly dataDir: string;
  stop(): void;
}

const candidateBinDirs = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

/** Folder holding initdb and pg_ctl, or null when PostgreSQL is not installed. */
export function findPostgresBin(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return path.dirname(fs.realpathSync(onPath));
  return candidateBinDirs.find((d) => fs.existsSync(path.join(d, 'initdb'))) ?? null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * initdb + pg_ctl start into a fresh folder on a free loopback port. PostgreSQL refuses to run as root, so
 * as root the server runs as the `postgres` user that Debian's package creates.
 */
export async function startTempPostgres(settings: Record<string, string> = {}): Promise<TempPostgres> {
  const bin = findPostgresBin();
  if (!bin) throw new Error('PostgreSQL binaries (initdb, pg_ctl) not found');
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-pg-'));
  const dataDir = path.join(dir, 'data');
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  };
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale']);
  const port = await freePort();
  const options = {
    listen_addresses: "'127.0.0.1'",
    port: String(port),
    unix_socket_directories: `'${dir}'`,
    max_connections: '200',
    fsync: 'on',
    synchronous_commit: 'on',
    ...settings,
  };
  fs.appendFileSync(
    path.join(dataDir, 'postgresql.conf'),
    `\n${Object.entries(options).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`,
  );
  run('pg_ctl', ['-D', dataDir, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  const version = execFileSync(path.join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    version,
    dataDir,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
