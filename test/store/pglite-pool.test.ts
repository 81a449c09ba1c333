import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { UnavailableError } from '../../src/domain/unavailable.js';
import type { Db } from '../../src/store/database.js';
import { openEmbedded } from '../support/databases.js';

/**
 * Issue 22: the embedded database's one session, lent in turn. A lone statement (a fetch's read) goes ahead of
 * transactions waiting for the session (a create group's holds it across several round trips), a few in a row at
 * most so that reads cannot starve them; and a wait stays bounded by DATABASE_TIMEOUT_MS.
 */
/** A transaction that holds the session until `release` is called. */
function holdSession(db: Db): { release: () => void; done: Promise<void>; started: Promise<void> } {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const begun = new Promise<void>((r) => (started = r));
  const done = db.db.transaction().execute(async (tx) => {
    await sql`SELECT 1`.execute(tx);
    started();
    await gate;
  });
  return { release, done, started: begun };
}

describe('the embedded database session, lent in turn', () => {
  const opened: Db[] = [];
  after(async () => {
    for (const db of opened) await db.close();
  });

  it('lets a lone read waiting behind a transaction go before another waiting transaction', async () => {
    const db = await openEmbedded();
    opened.push(db);
    const order: string[] = [];
    const first = holdSession(db);
    await first.started;
    const second = db.db.transaction().execute(async (tx) => {
      await sql`SELECT 2`.execute(tx);
      order.push('transaction');
    });
    await new Promise((r) => setTimeout(r, 50)); // the transaction is waiting first
    const read = sql`SELECT 3`.execute(db.db).then(() => order.push('read'));
    await new Promise((r) => setTimeout(r, 50));
    first.release();
    await Promise.all([first.done, second, read]);
    assert.deepEqual(order, ['read', 'transaction']);
  });

  it('lets at most 8 lone reads in a row go ahead of a waiting transaction', async () => {
    const db = await openEmbedded();
    opened.push(db);
    const order: string[] = [];
    const first = holdSession(db);
    await first.started;
    const waiting = db.db.transaction().execute(async (tx) => {
      await sql`SELECT 0`.execute(tx);
      order.push('transaction');
    });
    await new Promise((r) => setTimeout(r, 50));
    const reads = Array.from({ length: 12 }, (_, i) => sql`SELECT ${i}`.execute(db.db).then(() => order.push(`read ${i}`)));
    await new Promise((r) => setTimeout(r, 50));
    first.release();
    await Promise.all([first.done, waiting, ...reads]);
    assert.equal(order.indexOf('transaction'), 8, order.join(', '));
  });

  it('bounds the wait for the session: a waiter past DATABASE_TIMEOUT_MS is refused and leaves the queue', async () => {
    const db = await openEmbedded(300);
    opened.push(db);
    const first = holdSession(db);
    await first.started;
    const refused = await sql`SELECT 1`.execute(db.db).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(refused instanceof UnavailableError, String(refused));
    first.release();
    await first.done;
    const after = await sql<{ n: number }>`SELECT 7 AS n`.execute(db.db);
    assert.equal(after.rows[0]?.n, 7, 'the session is lent again once free');
  });
});
