import pg from 'pg';
import { UnavailableError } from '../domain/unavailable.js';
import { isDatabaseUnavailable, retryAfterFor } from './bounded-pool.js';
import type { DatabaseHost, DatabaseTarget } from './database-url.js';

/** SQLSTATE of a write refused by a read-only server (a standby, or a primary being demoted). */
const readOnlyTransaction = '25006';

/**
 * Which of the URL's hosts new connections go to: the writable primary once one was found, else the next host
 * to try. Every pool connection is checked at connect; one that fails, lands on a read-only server, or loses its
 * server later moves the guess on to the next host, so the pool finds the primary again after a failover.
 */
export class PrimaryLocator {
  private index = 0;

  constructor(readonly hosts: readonly DatabaseHost[]) {}

  get current(): DatabaseHost {
    return this.hosts[this.index] as DatabaseHost;
  }

  /** `host` is not (or no longer) the writable primary: the next connection tries the host after it. */
  wrong(host: DatabaseHost): void {
    if (this.hosts[this.index] !== host) return;
    this.index = (this.index + 1) % this.hosts.length;
  }
}

/** True for an error that says the connection's server is gone, going, or read-only: look for the primary again. */
export function isWrongServer(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (code === readOnlyTransaction) return true;
  // Time-outs of a server that answers (statement, lock, idle in transaction) and too many connections say
  // nothing about which server is the primary.
  if (code === '57014' || code === '55P03' || code === '25P03' || code === '53300') return false;
  return isDatabaseUnavailable(err);
}

/** Why a connection was refused after connecting: the server it reached takes no writes. */
class ReadOnlyServerError extends Error {
  readonly code = '08006';
}

/**
 * pg.Pool over the URL's hosts that lends only connections to the writable server. Each new connection goes to
 * the locator's current host and is checked (`pg_is_in_recovery()`, `transaction_read_only`) before it is lent; a
 * host that refuses, times out or is read-only moves the locator on, and the pool tries the next one, pausing
 * between rounds, until `timeoutMs` from the ask has passed: then it fails with an UnavailableError.
 */
export class PrimaryPool extends pg.Pool {
  readonly locator: PrimaryLocator;

  constructor(target: DatabaseTarget, options: Omit<pg.PoolConfig, 'connectionString' | 'Client' | 'onConnect'>, private readonly timeoutMs: number) {
    const locator = new PrimaryLocator(target.hosts);
    // One host's connect may take connect_timeout, else an even share of the time-out, so that a host that
    // does not answer at all leaves time for the next one; at least a second, as a loaded server needs.
    const attemptMs = target.connectTimeoutMs ?? Math.max(1_000, Math.floor(timeoutMs / target.hosts.length));
    super({
      ...target.config,
      ...options,
      connectionTimeoutMillis: Math.min(attemptMs, options.connectionTimeoutMillis ?? attemptMs),
      Client: primaryClient(locator),
      onConnect: async (client: pg.ClientBase) => {
        const host = hostOf(client as pg.Client);
        const { rows } = await client.query<{ standby: boolean }>(
          "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' AS standby",
        );
        if (rows[0]?.standby) {
          if (host) locator.wrong(host);
          throw new ReadOnlyServerError(`${host?.host ?? '?'}:${host?.port ?? '?'} is read-only (a standby)`);
        }
      },
    } as unknown as pg.PoolConfig);
    this.locator = locator;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): Promise<pg.PoolClient> | void {
    const found = this.findPrimary();
    if (!callback) return found;
    found.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (err: Error) => callback(err, undefined, () => undefined),
    );
  }

  /** A lent connection's query failed: when the error says its server is gone or read-only, look elsewhere next. */
  serverFailed(client: pg.PoolClient, err: unknown): void {
    const host = hostOf(client as unknown as pg.Client);
    if (host && isWrongServer(err)) this.locator.wrong(host);
  }

  private async findPrimary(): Promise<pg.PoolClient> {
    const deadline = Date.now() + this.timeoutMs;
    let tried = 0;
    for (;;) {
      try {
        return await super.connect();
      } catch (err) {
        // A wrong statement in onConnect or bad credentials are not a failover: said at once.
        if (!(err instanceof ReadOnlyServerError) && !isWrongServer(err)) throw err;
        if (this.ending || this.ended) throw err;
        tried += 1;
        // After each round of every host, a pause: a standby is being promoted, give it a moment.
        const pause = tried % this.locator.hosts.length === 0 ? 200 : 0;
        if (Date.now() + pause >= deadline) {
          throw new UnavailableError(
            `no writable database server among ${this.locator.hosts.length} within ${this.timeoutMs} ms: ${err instanceof Error ? err.message : String(err)}`,
            retryAfterFor(this.timeoutMs),
            { cause: err },
          );
        }
        if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}

const hostKey = Symbol('databaseHost');

function hostOf(client: pg.Client): DatabaseHost | undefined {
  return (client as unknown as { [hostKey]?: DatabaseHost })[hostKey];
}

/**
 * The pool's client class: each connection goes to the locator's current host, and tells the locator when that
 * host failed it (could not connect, or lost the server later) so that the next connection tries another.
 */
function primaryClient(locator: PrimaryLocator): typeof pg.Client {
  return class PrimaryClient extends pg.Client {
    constructor(config: pg.ClientConfig) {
      const host = locator.current;
      super({ ...config, host: host.host, port: host.port });
      (this as unknown as { [hostKey]: DatabaseHost })[hostKey] = host;
      // A connection whose server went away (shut down, killed, demoted) says the primary may have moved.
      this.on('error', (err) => {
        if (isWrongServer(err)) locator.wrong(host);
      });
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const host = hostOf(this) as DatabaseHost;
      const connecting = super.connect().catch((err: unknown) => {
        locator.wrong(host);
        throw err;
      });
      if (!callback) return connecting;
      const done = callback as (err: Error | null, c?: pg.Client) => void;
      connecting.then(
        (c) => done(null, c),
        (err: Error) => done(err),
      );
    }
  };
}
