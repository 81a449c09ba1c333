import { sql, type Kysely } from 'kysely';
import { channels, type Channel } from '../domain/channel-driver.js';
import type { Price, PriceStore } from '../domain/prices.js';
import type { Database } from './schema.js';

/** The channel price changes are announced on (PostgreSQL), so that every instance reads the prices again. */
export const pricesChannel = 'otp_prices';

/** Prices (contract 17) in the database; each change is announced by the transaction making it. */
export class SqlPriceStore implements PriceStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** PostgreSQL: NOTIFY other processes in the changing transaction. */
    private readonly announce: boolean,
    private readonly now: () => Date,
  ) {}

  put(prices: readonly Price[]): Promise<{ added: number; updated: number }> {
    return this.db.transaction().execute(async (trx) => {
      if (prices.length === 0) return { added: 0, updated: 0 };
      const at = this.now();
      // xmax = 0 on a row this statement inserted, not on one it updated.
      const { rows } = await sql<{ inserted: boolean }>`
        INSERT INTO prices (provider, channel, destination, currency, price, updated_at)
        SELECT * FROM unnest(${prices.map((p) => p.provider)}::text[], ${prices.map((p) => p.channel)}::text[],
          ${prices.map((p) => p.destination)}::text[], ${prices.map((p) => p.currency)}::text[], ${prices.map((p) => p.price)}::numeric[],
          array_fill(${at}::timestamptz, ARRAY[${prices.length}::int]))
        ON CONFLICT (provider, channel, destination) DO UPDATE SET currency = excluded.currency, price = excluded.price, updated_at = excluded.updated_at
        RETURNING (xmax = 0) AS inserted`.execute(trx);
      await this.announced(trx);
      const added = rows.filter((r) => r.inserted).length;
      return { added, updated: rows.length - added };
    });
  }

  remove(provider: string, channel: Channel, destination: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const removed = await trx.deleteFrom('prices').where('provider', '=', provider).where('channel', '=', channel).where('destination', '=', destination).executeTakeFirst();
      const any = Number(removed.numDeletedRows) > 0;
      if (any) await this.announced(trx);
      return any;
    });
  }

  async all(): Promise<Price[]> {
    const rows = await this.db.selectFrom('prices').selectAll().orderBy('provider').orderBy('channel').orderBy('destination').execute();
    return rows
      .filter((r) => (channels as readonly string[]).includes(r.channel))
      .map((r) => ({ provider: r.provider, channel: r.channel as Channel, destination: r.destination, currency: r.currency, price: normalised(r.price) }));
  }

  private async announced(trx: Kysely<Database>): Promise<void> {
    if (this.announce) await sql`SELECT pg_notify(${pricesChannel}, '')`.execute(trx);
  }
}

/** numeric as PostgreSQL writes it keeps the scale it was given (`0.01250`): the service's amounts have no trailing zeros. */
export function normalised(numeric: string): string {
  return numeric.includes('.') ? numeric.replace(/\.?0+$/, '') : numeric;
}
