import { sql, type Kysely } from 'kysely';
import { hourWindowPrefix } from '../domain/new-country.js';
import type { QuotaStore } from '../domain/quota-limiter.js';
import type { CounterStore } from '../domain/window-counter.js';
import type { Database } from './schema.js';

/** Shared window counters: each instance adds its hits and learns the totals in one statement. */
export class SqlCounterStore implements CounterStore, QuotaStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * One statement: the (key, window) row is made or raised by at most `want` without passing `limit`, under the
   * row's own lock, and answers what it granted: exact whatever other instances claim at the same moment.
   */
  async claim(key: string, windowStart: number, want: number, limit: number): Promise<number> {
    const { rows } = await sql<{ last_grant: number }>`
      INSERT INTO rate_counters AS c (key, window_start, count, last_grant)
        VALUES (${key}, ${new Date(windowStart)}, least(${want}::int, ${limit}::int), least(${want}::int, ${limit}::int))
      ON CONFLICT (key, window_start) DO UPDATE
        SET count = greatest(c.count, least(c.count + ${want}::int, ${limit}::int)),
            last_grant = greatest(0, least(${want}::int, ${limit}::int - c.count))
      RETURNING last_grant`.execute(this.db);
    return rows[0]?.last_grant ?? 0;
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

  /**
   * Drops windows that started before `before`; an hour's window (hourWindowKey) is kept until two hours before
   * it, so that no window in force is dropped and counted afresh.
   */
  async prune(before: Date): Promise<void> {
    await this.db
      .deleteFrom('rate_counters')
      .where('window_start', '<', before)
      .where((eb) => eb.or([eb('key', 'not like', `${hourWindowPrefix}%`), eb('window_start', '<', new Date(before.getTime() - 2 * 3_600_000))]))
      .execute();
  }
}
