import { sql, type Kysely } from 'kysely';
import type { CounterStore } from '../domain/window-counter.js';
import type { Database } from './schema.js';

/** Shared window counters: each instance adds its hits and learns the totals in one statement. */
export class SqlCounterStore implements CounterStore {
  constructor(private readonly db: Kysely<Database>) {}

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
