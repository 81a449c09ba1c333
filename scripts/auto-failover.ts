import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './temp-postgres.js';

const run = promisify(execFile);

/**
 * A pg_auto_failover formation on loopback for tests and the bench: a monitor, a primary and a secondary with
 * synchronous replication (pg_auto_failover's default with one standby: `synchronous_standby_names = 'ANY 1
 * (...)'`), each node kept by its own `pg_autoctl run`. As root the nodes run as the `postgres` user, as
 * temp-postgres.ts runs the test server.
 */
export interface FailoverCluster {
  /** The multi-host URL of the `otp` database, `target_session_attrs=read-write`, as pg_autoctl show uri gives it. */
  readonly url: string;
  readonly nodes: readonly FailoverNode[];
  /** Each node's state as the monitor has it. */
  states(): Promise<NodeState[]>;
  /** Waits until the monitor reports one primary and one secondary (both nodes up and replicating). */
  settled(timeoutMs?: number): Promise<{ primary: FailoverNode; secondary: FailoverNode }>;
  /** The node that is the writable primary now, asked of the nodes themselves (null while none is). */
  writable(): Promise<FailoverNode | null>;
  /** `pg_autoctl stop`: the node's keeper and its PostgreSQL stop cleanly (fast shutdown). */
  stop(node: FailoverNode): Promise<void>;
  /** SIGKILL of the node's keeper and its postmaster: a machine that dies, with no shutdown at all. */
  kill(node: FailoverNode): Promise<void>;
  /** `pg_autoctl run` again: the node rejoins, as a secondary once another was promoted. */
  start(node: FailoverNode): void;
  close(): Promise<void>;
}

export interface FailoverNode {
  readonly name: string;
  readonly port: number;
  readonly pgdata: string;
}

export interface NodeState {
  readonly name: string;
  readonly port: number;
  readonly reported: string;
  readonly assigned: string;
}

const binDirs = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'];

/** The PostgreSQL folder that has pg_autoctl beside it (Debian's postgresql-NN-auto-failover), or null. */
export function findAutoFailover(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v pg_autoctl'], { encoding: 'utf8' }).stdout.trim();
  const bin = binDirs.find((d) => fs.existsSync(path.join(d, 'pg_autoctl')) && fs.existsSync(path.join(d, 'pg_ctl')));
  if (bin) return bin;
  return onPath ? binDirs.find((d) => fs.existsSync(path.join(d, 'pg_ctl'))) ?? null : null;
}

/**
 * The monitor's health checks and timeouts, shortened from their defaults (a 5 s health check, a node unhealthy
 * after 20 s, 30 s before a primary that stopped reporting counts as demoted), so that a failover takes seconds.
 * The demote timeout is how long the monitor waits before it promotes the standby while the primary's keeper does
 * not answer: a keeper cut off from the monitor demotes its own primary within it, so it must stay above the
 * keeper's own network timeouts on a real network (docs/failover.md).
 */
export const fastMonitorSettings: Readonly<Record<string, string>> = {
  'pgautofailover.health_check_period': '1000',
  'pgautofailover.health_check_timeout': '1000',
  'pgautofailover.health_check_max_retries': '1',
  'pgautofailover.health_check_retry_delay': '500',
  'pgautofailover.node_considered_unhealthy_timeout': '2000',
  'pgautofailover.primary_demote_timeout': '3000',
};

export async function startFailoverCluster(): Promise<FailoverCluster> {
  const found = findAutoFailover();
  if (!found) throw new Error('pg_autoctl not found (Debian: apt-get install postgresql-15-auto-failover)');
  const bin: string = found;
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-paf-'));
  if (asRoot) fs.chownSync(dir, ...postgresIds());
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'share') };
  const command = (args: string[]): [string, string[]] =>
    asRoot
      ? ['runuser', ['-u', 'postgres', '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'pg_autoctl', ...args]]
      : ['pg_autoctl', args];
  const autoctl = async (...args: string[]): Promise<string> => {
    const [file, argv] = command(args);
    try {
      return (await run(file, argv, { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 })).stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`pg_autoctl ${args.join(' ')}: ${e.message}\n${e.stderr ?? ''}`);
    }
  };
  const keepers = new Map<string, ChildProcess>();
  const keep = (pgdata: string) => {
    const [file, argv] = command(['run', '--pgdata', pgdata]);
    const log = fs.openSync(`${pgdata}.log`, 'a');
    // A process group of its own, so that a kill reaches the keeper and every process it started.
    const child = spawn(file, argv, { env: { ...process.env, ...env }, stdio: ['ignore', log, log], detached: true });
    fs.closeSync(log);
    child.on('error', () => undefined);
    keepers.set(pgdata, child);
  };

  const abandon = async (err: unknown): Promise<never> => {
    for (const child of keepers.values()) if (child.pid && child.exitCode === null && child.signalCode === null) signalGroup(child.pid, 'SIGKILL');
    await Promise.all([...keepers.values()].map((c) => exited(c)));
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  };
  const monitorPort = await freePort();
  const monitorData = path.join(dir, 'monitor');
  const common = ['--auth', 'trust', '--no-ssl', '--hostname', '127.0.0.1'];
  try {
    return await formation();
  } catch (err) {
    return abandon(err);
  }

  async function formation(): Promise<FailoverCluster> {
    await autoctl('create', 'monitor', '--pgdata', monitorData, '--pgport', String(monitorPort), ...common);
    fs.appendFileSync(
      path.join(monitorData, 'postgresql.conf'),
      `\n${Object.entries(fastMonitorSettings).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`,
    );
    keep(monitorData);
    const monitorUri = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`;
    await until('the monitor to answer', 30_000, async () => {
      try {
        await autoctl('show', 'state', '--pgdata', monitorData);
        return true;
      } catch {
        return false;
      }
    });

    const nodes: FailoverNode[] = [];
    for (const name of ['node1', 'node2']) {
      const node = { name, port: await freePort(), pgdata: path.join(dir, name) };
      await autoctl('create', 'postgres', '--pgdata', node.pgdata, '--pgport', String(node.port), ...common, '--monitor', monitorUri, '--dbname', 'otp', '--name', name);
      // Room for the service's pools and the tests' own connections, beside pg_auto_failover's.
      fs.appendFileSync(path.join(node.pgdata, 'postgresql.conf'), '\nmax_connections = 200\n');
      keep(node.pgdata);
      nodes.push(node);
      // The second node is created from the first once that one is primary.
      if (nodes.length === 1) await until(`${name} to be primary`, 60_000, async () => (await states()).some((s) => s.name === name && s.reported === 'single'));
    }

    async function states(): Promise<NodeState[]> {
      const json = JSON.parse(await autoctl('show', 'state', '--pgdata', monitorData, '--json')) as Array<Record<string, unknown>>;
      return json.map((n) => ({
        name: String(n.nodename),
        port: Number(n.nodeport),
        reported: String(n.current_group_state),
        assigned: String(n.assigned_group_state),
      }));
    }

    const cluster: FailoverCluster = {
      url: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/otp?target_session_attrs=read-write`,
      nodes,
      states,
      async settled(timeoutMs = 90_000) {
        let found: { primary: FailoverNode; secondary: FailoverNode } | null = null;
        await until('one primary and one secondary', timeoutMs, async () => {
          const now = await states();
          const primary = now.find((s) => s.reported === 'primary' && s.assigned === 'primary');
          const secondary = now.find((s) => s.reported === 'secondary' && s.assigned === 'secondary');
          if (!primary || !secondary) return false;
          found = { primary: byName(primary.name), secondary: byName(secondary.name) };
          return true;
        });
        return found as unknown as { primary: FailoverNode; secondary: FailoverNode };
      },
      async writable() {
        for (const node of nodes) {
          try {
            const { stdout } = await run(path.join(bin, 'psql'), ['-h', '127.0.0.1', '-p', String(node.port), '-U', 'postgres', '-d', 'otp', '-Atc', "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'"], {
              env: { ...process.env, PGCONNECT_TIMEOUT: '2' },
            });
            if (stdout.trim() === 'f') return node;
          } catch {
            // Down: not the primary.
          }
        }
        return null;
      },
      async stop(node) {
        await autoctl('stop', '--pgdata', node.pgdata);
        await exited(keepers.get(node.pgdata));
      },
      async kill(node) {
        const postmaster = postmasterPid(node.pgdata);
        const keeper = keepers.get(node.pgdata);
        // The whole machine goes at once: the keeper's group, the postmaster, and every process it started.
        const children = postmaster === null ? [] : childrenOf(postmaster);
        if (keeper?.pid) signalGroup(keeper.pid, 'SIGKILL');
        if (postmaster) signal(postmaster, 'SIGKILL');
        for (const pid of children) signal(pid, 'SIGKILL');
        await exited(keeper);
        // Its backends notice the postmaster's death and end; the next start recovers the data folder.
        await until(`${node.name}'s backends to end`, 30_000, async () => !isAlive(postmaster));
      },
      start(node) {
        keep(node.pgdata);
      },
      async close() {
        // Stopped as an operator stops them (the nodes, then the monitor): each keeper stops its PostgreSQL, whose
        // processes all end, and exits. Killed, the monitor's postmaster left its pg_auto_failover health-check
        // worker and its logger running after the tests.
        for (const pgdata of [...nodes.map((n) => n.pgdata), monitorData]) {
          const keeper = keepers.get(pgdata);
          if (!keeper?.pid || keeper.exitCode !== null || keeper.signalCode !== null) continue;
          await Promise.race([autoctl('stop', '--pgdata', pgdata).then(() => exited(keeper)), new Promise((r) => setTimeout(r, 20_000))]).catch(() => undefined);
        }
        // Whatever did not stop in time is killed, with every process its postmaster started.
        const postmasters = [...nodes.map((n) => n.pgdata), monitorData].map(postmasterPid).filter((pid) => pid !== null && isAlive(pid)) as number[];
        const children = postmasters.flatMap(childrenOf);
        for (const child of keepers.values()) {
          if (child.pid && child.exitCode === null && child.signalCode === null) signalGroup(child.pid, 'SIGKILL');
        }
        for (const pid of [...postmasters, ...children]) signal(pid, 'SIGKILL');
        await Promise.all([...keepers.values()].map((c) => exited(c)));
        await until('the servers to end', 30_000, async () => ![...postmasters, ...children].some(isAlive));
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
      },
    };
    function byName(name: string): FailoverNode {
      const node = nodes.find((n) => n.name === name);
      if (!node) throw new Error(`no node ${name}`);
      return node;
    }
    return cluster;
  }
}

function postgresIds(): [number, number] {
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return [uid, gid];
}

/** The processes whose parent is `pid` now (Linux's /proc). */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((child) => procStat(child)?.parent === pid);
}

function postmasterPid(pgdata: string): number | null {
  try {
    const pid = Number(fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  signal(-pid, sig);
}

/** Running: a process that ended but was not reaped yet (a zombie, whose parent is gone) is not. */
function isAlive(pid: number | null): boolean {
  if (pid === null) return false;
  const stat = procStat(pid);
  return stat !== null && stat.state !== 'Z';
}

/** A process's state and parent from /proc/PID/stat (the fields after the command's closing parenthesis). */
function procStat(pid: number): { state: string; parent: number } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state = '', parent = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, parent: Number(parent) };
  } catch {
    return null;
  }
}

async function exited(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
