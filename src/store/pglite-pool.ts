import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { UnavailableError } from '../domain/unavailable.js';
import { retryAfterFor } from './bounded-pool.js';
import type { PGliteThread } from './pglite-thread.js';

/**
 * Presents the embedded database (one PGlite instance, in its thread) as the `pg` pool that Kysely's PostgreSQL dialect expects.
 *
 * PGlite is a single session, so a "connection" is the whole database: it is lent to one holder at a time
 * and the others queue. Without this, two interleaved Kysely transactions would share one session.
 * The wait for the turn is bounded (DATABASE_TIMEOUT_MS, as PostgreSQL bounds the wait for a connection): a
 * holder that keeps the session too long makes the others fail with an UnavailableError rather than queue
 * without end, and a waiter that gave up passes its turn on as soon as it comes.
 *
 * A transaction's BEGIN is not sent alone: it goes to the thread with the transaction's first statement, in one
 * message, which saves a round trip per transaction (a failing BEGIN fails that statement, and so the transaction).
 */
export class PGlitePool implements PostgresPool {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly thread: PGliteThread,
    private readonly timeoutMs: number,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => turn);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.timeoutMs);
    });
    const came = await Promise.race([previous.then(() => true), gaveUp]);
    clearTimeout(timer);
    if (!came) {
      void previous.then(() => release());
      throw new UnavailableError(
        `the embedded database was busy for longer than ${this.timeoutMs} ms`,
        retryAfterFor(this.timeoutMs),
      );
    }
    const thread = this.thread;
    let released = false;
    let begin: { sql: string; params: readonly unknown[] } | null = null;
    return {
      async query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
        if (begin === null && isBegin(sql)) {
          begin = { sql, params: parameters };
          return { command: 'SELECT', rowCount: 0, rows: [] };
        }
        const statements = begin ? [begin, { sql, params: parameters }] : [{ sql, params: parameters }];
        begin = null;
        const result = await thread.query<R>(statements);
        return {
          command: commandOf(sql),
          rowCount: result.affectedRows ?? result.rows.length,
          rows: result.rows,
        };
      },
      release() {
        if (released) return;
        released = true;
        release();
      },
    } as PostgresPoolClient;
  }

  async end(): Promise<void> {
    await this.tail;
  }
}

/** Kysely's transaction openers: `begin`, or `start transaction` with an isolation level or access mode. */
function isBegin(sql: string): boolean {
  return /^\s*(?:begin|start\s+transaction)\b/i.test(sql);
}

function commandOf(sql: string): PostgresQueryResult<unknown>['command'] {
  const word = /^\s*(?:with\b[\s\S]*?\)\s*)?(\w+)/i.exec(sql)?.[1]?.toUpperCase();
  switch (word) {
    case 'INSERT':
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
      return word;
    default:
      return 'SELECT';
  }
}
