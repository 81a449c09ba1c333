import { sql, type Kysely } from 'kysely';
import type { QuotaStore } from '../domain/quota-limiter.js';
import type { CounterStore } from '../domain/window-counter.js';
import type { Database } from './schema.js';

/** Shared window counters: each instance adds its hits and learns the totals in one statement. */
export class SqlCounterStore implements CounterStore, QuotaStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The (key, window) row is made if missing, then locked, raised by at most `want` without passing `limit`, and
   * the difference is what was granted: exact whatever other instances claim at the same moment. Claims are
   * rare (one per share of the quota), so a short transaction of its own costs little.
   */
  async claim(key: string, windowStart: number, want: number, limit: number): Promise<number> {
    const start = new Date(windowStart);
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('rate_counters')
        .values({ key, window_start: start, count: 0 })
        .onConflict((oc) => oc.columns(['key', 'window_start']).doNothing())
        .execute();
      const row = await trx
        .selectFrom('rate_counters')
        .select('count')
        .where('key', '=', key)
        .where('window_start', '=', start)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const granted = Math.max(0, Math.min(want, limit - row.count));
      if (granted > 0) {
        await trx.updateTable('rate_counters').set({ count: row.count + granted }).where('key', '=', key).where('window_start', '=', start).execute();
      }
      return granted;
    });
  }

  async add(entries: readonly { key: string; windowStart: number; delta: number }[]): Promise<number[]> {
    if (entries.length === 0) return [];
    const rows = await this.db
      .insertInto('rate_counters')
      .values(entries.map((e) => ({ key: e.key, window_start: new Date(e.windowStart), count: e.delta })))
      .onConflict((oc) =>
        oc.columns(['key', 'window_start']).doUpdateSet({ count: sql`rate_counters.count + excluded.count` }),
      )
      .returning(['key', 'window_start', 'count'])
      .execute();
    const totals = new Map(rows.map((r) => [`${r.key}@${r.window_start.getTime()}`, r.count]));
    return entries.map((e) => totals.get(`${e.key}@${e.windowStart}`) ?? e.delta);
  }

  /** Drops windows that ended before `before`. */
  async prune(before: Date): Promise<void> {
    await this.db.deleteFrom('rate_counters').where('window_start', '<', before).execute();
  }
}
