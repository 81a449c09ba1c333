import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { UnavailableError } from '../domain/unavailable.js';

/**
 * SQLSTATEs that say the server gave up in time or is going away, not that the statement was wrong:
 * statement_timeout (57014), lock_timeout (55P03), idle_in_transaction_session_timeout (25P03), shutdown and
 * start-up (57P01-57P03), too many connections (53300), every connection exception (class 08), and a write
 * refused as read-only (25006: the server was a primary that a failover has just demoted).
 */
const unavailableStates = new Set(['57014', '55P03', '25P03', '57P01', '57P02', '57P03', '53300', '25006']);
const networkCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** What pg and pg-pool say, without a code, when a connection times out or is lost. */
const lostConnection = /timeout exceeded when trying to connect|Connection terminated|Query read timeout|connection error and is not queryable|not queryable/i;

/** True for an error of the database not answering or not reachable (as opposed to a wrong statement). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof UnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (unavailableStates.has(code) || code.startsWith('08') || networkCodes.has(code))) return true;
  return lostConnection.test(err.message) || (err.cause !== undefined && isDatabaseUnavailable(err.cause));
}

/** Seconds a client is told to wait before trying again: one time-out's worth, at least one. */
export function retryAfterFor(timeoutMs: number): number {
  return Math.max(1, Math.ceil(timeoutMs / 1000));
}

/**
 * The `pg` pool as Kysely uses it, with every lending of a connection bounded: from the moment a connection
 * is asked for, its holder has `timeoutMs` for all of its queries (a transaction included). The server's own
 * time-outs (set at connect) cover a server that is slow; this covers one that does not answer at all (frozen,
 * or a network that drops packets), where no server-side timer can fire. A connection whose query overran or
 * failed that way is destroyed at once, not handed back: its session, and any transaction open on it, ends
 * when the server sees the socket close, so nothing is half done. Such errors become an UnavailableError.
 */
export class BoundedPgPool implements PostgresPool {
  constructor(
    private readonly pool: pg.Pool,
    private readonly timeoutMs: number,
    /** Told of each lent connection given up on an error (a failover pool looks for the primary again). */
    readonly onBroken: (client: pg.PoolClient, err: unknown) => void = () => undefined,
    /** DATABASE_PREPARED_STATEMENTS: marked statements are prepared once per connection; false, sent as any other. */
    readonly prepared = true,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    const deadline = Date.now() + this.timeoutMs;
    let client: pg.PoolClient;
    try {
      // pg-pool bounds this wait itself (connectionTimeoutMillis), whether for a new connection or a free one.
      client = await this.pool.connect();
    } catch (err) {
      throw this.translate(err, 'no database connection could be had');
    }
    return new BoundedClient(client, deadline, this) as unknown as PostgresPoolClient;
  }

  end(): Promise<void> {
    return this.pool.end();
  }

  /** An UnavailableError for the database's failure to answer; any other error unchanged. */
  translate(err: unknown, what: string): unknown {
    if (err instanceof UnavailableError || !isDatabaseUnavailable(err)) return err;
    return new UnavailableError(`${what} within ${this.timeoutMs} ms: ${err instanceof Error ? err.message : String(err)}`, retryAfterFor(this.timeoutMs), { cause: err });
  }

  overrun(): UnavailableError {
    return new UnavailableError(`the database did not answer within ${this.timeoutMs} ms`, retryAfterFor(this.timeoutMs));
  }
}

/** What a statement's text begins with when it is to be prepared once per connection (`prepared` in statements.ts). */
export const preparedMark = '/* prepared */';

/** The most statement texts prepared in one process. */
const maxPrepared = 500;

/** The names of the statements prepared so far, by text: a statement of the same text has the same name everywhere. */
const preparedNames = new Map<string, string>();

/**
 * A marked statement's name (node-postgres parses a named statement once per connection, and PostgreSQL keeps its
 * plan); null for any other. Only the statements every create sends are marked, whose texts are few: a group's
 * read varies by the parts asked, never by the values (they are arrays), so each connection keeps a handful.
 */
function preparedName(sql: string): string | null {
  if (!sql.startsWith(preparedMark)) return null;
  let name = preparedNames.get(sql);
  // A text made of values would make a statement per value: past a few hundred texts, none more is prepared.
  if (name === undefined && preparedNames.size >= maxPrepared) return null;
  if (name === undefined) {
    name = `otp_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    preparedNames.set(sql, name);
  }
  return name;
}

/** One lending of a pooled connection, with the deadline of its holder. */
class BoundedClient {
  /** Set once the connection is given up: every later query fails at once with it. */
  private broken: unknown = null;
  private returned = false;
  private readonly onError = (err: Error) => this.breakWith(this.bounds.translate(err, 'the database connection failed'));

  constructor(
    private readonly client: pg.PoolClient,
    private readonly deadline: number,
    private readonly bounds: BoundedPgPool,
  ) {
    // A checked-out connection that errors (its server went away) must not take the process down.
    client.on('error', this.onError);
  }

  async query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    if (this.broken) throw this.broken;
    const left = this.deadline - Date.now();
    if (left <= 0) {
      this.breakWith(this.bounds.overrun());
      throw this.broken;
    }
    const name = this.bounds.prepared ? preparedName(sql) : null;
    const running = this.client.query<R & pg.QueryResultRow>(name === null ? sql : { name, text: sql, values: [...parameters] }, name === null ? [...parameters] : undefined);
    // Once the race below is lost, the query's own failure (its connection destroyed) has no one to tell.
    running.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const overran = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(this.bounds.overrun()), left);
    });
    try {
      const result = await Promise.race([running, overran]);
      return { command: commandOf(result.command), rowCount: result.rowCount ?? result.rows.length, rows: result.rows };
    } catch (err) {
      const translated = this.bounds.translate(err, 'the database did not answer');
      if (translated instanceof UnavailableError) this.breakWith(translated);
      throw translated;
    } finally {
      clearTimeout(timer);
    }
  }

  release(): void {
    if (this.returned) return;
    this.returned = true;
    this.client.removeListener('error', this.onError);
    this.client.release();
  }

  /** Destroys the connection now, so that its pool slot is free again and its session ends. */
  private breakWith(err: unknown): void {
    if (this.broken) return;
    this.broken = err;
    if (this.returned) return;
    this.returned = true;
    this.bounds.onBroken(this.client, (err as { cause?: unknown } | null)?.cause ?? err);
    this.client.removeListener('error', this.onError);
    // The destroyed connection may still report its end; no one is left to tell.
    this.client.on('error', () => undefined);
    this.client.release(err instanceof Error ? err : true);
  }
}

function commandOf(command: string): PostgresQueryResult<unknown>['command'] {
  switch (command) {
    case 'INSERT':
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
      return command;
    default:
      return 'SELECT';
  }
}
