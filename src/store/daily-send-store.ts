import { sql, type Kysely } from 'kysely';
import { utcDay } from '../domain/daily-quota.js';
import type { QuotaStore } from '../domain/quota-limiter.js';
import type { Database } from './schema.js';

/**
 * CLIENT_DAILY_SEND_LIMIT's shares (contract 6): the key is a client id, the window a UTC day. A claim is one
 * statement, so no create waits on a lock of its client's: the upsert raises the day's count by what it grants
 * without passing the limit, under the row's own lock, and answers the grant it wrote.
 */
export class DailySendStore implements QuotaStore {
  constructor(private readonly db: Kysely<Database>) {}

  async claim(clientId: string, windowStart: number, want: number, limit: number): Promise<number> {
    const day = utcDay(new Date(windowStart));
    // A day already past the limit (workflow steps count as they commit, past it if need be) grants nothing.
    const { rows } = await sql<{ last_grant: number }>`
      INSERT INTO client_daily_sends AS s (client_id, day, sends, last_grant)
        VALUES (${clientId}::uuid, ${day}::date, least(${want}::int, ${limit}::int), least(${want}::int, ${limit}::int))
      ON CONFLICT (client_id, day) DO UPDATE
        SET sends = greatest(s.sends, least(s.sends + ${want}::int, ${limit}::int)),
            last_grant = greatest(0, least(${want}::int, ${limit}::int - s.sends))
      RETURNING last_grant`.execute(this.db);
    return rows[0]?.last_grant ?? 0;
  }
}
