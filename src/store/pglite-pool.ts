import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { UnavailableError } from '../domain/unavailable.js';
import { retryAfterFor } from './bounded-pool.js';
import type { PGliteThread } from './pglite-thread.js';

/** Statements that may go ahead of waiting transactions in a row, so that a stream of reads cannot starve them. */
const MAX_STATEMENTS_AHEAD = 8;

interface Waiter {
  /** A lone statement (no BEGIN): it holds the session for one round trip, not for a transaction's several. */
  readonly statement: boolean;
  readonly grant: () => void;
}

/**
 * Presents the embedded database (one PGlite instance, in its thread) as the `pg` pool that Kysely's PostgreSQL dialect expects.
 *
 * PGlite is a single session, so a "connection" is the whole database: it is lent to one holder at a time
 * and the others queue. Without this, two interleaved Kysely transactions would share one session.
 * The wait for the turn is bounded (DATABASE_TIMEOUT_MS, as PostgreSQL bounds the wait for a connection): a
 * holder that keeps the session too long makes the others fail with an UnavailableError rather than queue
 * without end, and a waiter that gave up leaves the queue.
 *
 * The turn is taken at a holder's first statement, not when Kysely asks for the connection, because only then is
 * it known whether a transaction follows: a lone statement (a fetch's read) goes ahead of waiting transactions
 * (a create group's, which holds the session across several round trips and the work between them), up to
 * MAX_STATEMENTS_AHEAD in a row. PostgreSQL's pool gives a read its own connection; this is the nearest the one
 * session can come.
 *
 * A transaction's BEGIN is not sent alone: it goes to the thread with the transaction's first statement, in one
 * message, which saves a round trip per transaction (a failing BEGIN fails that statement, and so the transaction).
 */
export class PGlitePool implements PostgresPool {
  private held = false;
  private aheadInARow = 0;
  private readonly waiting: Waiter[] = [];
  private drained: (() => void) | null = null;

  constructor(
    private readonly thread: PGliteThread,
    private readonly timeoutMs: number,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    const pool = this;
    let state: 'idle' | 'holding' | 'released' = 'idle';
    let begin: { sql: string; params: readonly unknown[] } | null = null;
    return {
      async query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
        if (state === 'released') throw new Error('query on a released embedded database connection');
        if (state === 'idle') {
          await pool.take(!isBegin(sql));
          state = 'holding';
        }
        if (begin === null && isBegin(sql)) {
          begin = { sql, params: parameters };
          return { command: 'SELECT', rowCount: 0, rows: [] };
        }
        const statements = begin ? [begin, { sql, params: parameters }] : [{ sql, params: parameters }];
        begin = null;
        const result = await pool.thread.query<R>(statements);
        return {
          command: commandOf(sql),
          rowCount: result.affectedRows ?? result.rows.length,
          rows: result.rows,
        };
      },
      release() {
        const wasHolding = state === 'holding';
        state = 'released';
        if (wasHolding) pool.passOn();
      },
    } as PostgresPoolClient;
  }

  async end(): Promise<void> {
    if (!this.held && this.waiting.length === 0) return;
    await new Promise<void>((resolve) => (this.drained = resolve));
  }

  /** Waits for the session, at most timeoutMs; a lone statement waits ahead of transactions. */
  private take(statement: boolean): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        statement,
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new UnavailableError(`the embedded database was busy for longer than ${this.timeoutMs} ms`, retryAfterFor(this.timeoutMs)));
      }, this.timeoutMs);
      this.waiting.push(waiter);
    });
  }

  /** The holder is done: the session goes to the next waiter (a lone statement first, within its allowance). */
  private passOn(): void {
    let at = -1;
    if (this.aheadInARow < MAX_STATEMENTS_AHEAD) at = this.waiting.findIndex((w) => w.statement);
    if (at > 0) this.aheadInARow += 1;
    else this.aheadInARow = 0;
    const next = this.waiting.splice(Math.max(at, 0), 1)[0];
    if (next) return next.grant();
    this.held = false;
    this.drained?.();
    this.drained = null;
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
