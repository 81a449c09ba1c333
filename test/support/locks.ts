import type pg from 'pg';

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
