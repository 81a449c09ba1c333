import { after, before } from 'node:test';
import pg from 'pg';
import { createHarness, type Harness } from './harness.js';

/** Until another session of this database waits on a lock (the store's statement behind `holder`'s lock). */
export async function waitUntilBlocked(holder: pg.Client): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await holder.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no other session waited on a lock within 2 s');
}

/**
 * A harness on PostgreSQL and a session of its own on the same database (to hold the locks the service's
 * statements then wait on), made before the suite's tests and closed after them.
 */
export function harnessWithSession(): { readonly h: Harness; readonly other: pg.Client } {
  let h: Harness;
  let other: pg.Client;
  before(async () => {
    h = await createHarness('postgres');
    other = new pg.Client({ connectionString: h.config.DATABASE_URL });
    await other.connect();
  });
  after(async () => {
    await other.end();
    await h.close();
  });
  return {
    get h() {
      return h;
    },
    get other() {
      return other;
    },
  };
}
