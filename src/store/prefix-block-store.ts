import type { Kysely } from 'kysely';
import type { PrefixBlock, PrefixBlocks } from '../admin/prefix-blocks.js';
import type { Database } from './schema.js';

/** prefix_blocks for the operator; creates write them in their own transaction (verification-tx.ts). */
export class SqlPrefixBlockStore implements PrefixBlocks {
  constructor(private readonly db: Kysely<Database>) {}

  async list(now: Date): Promise<PrefixBlock[]> {
    const rows = await this.db.selectFrom('prefix_blocks').selectAll().where('blocked_until', '>', now).orderBy('blocked_at', 'desc').execute();
    return rows.map((r) => ({ prefix: r.prefix, blockedAt: r.blocked_at.toISOString(), blockedUntil: r.blocked_until.toISOString() }));
  }

  async lift(prefix: string, now: Date): Promise<boolean> {
    // Ended now rather than deleted: creates count again only from its end, not from the ones that tripped it.
    const result = await this.db.updateTable('prefix_blocks').set({ blocked_until: now }).where('prefix', '=', prefix).where('blocked_until', '>', now).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
