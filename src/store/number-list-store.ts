import { sql, type Kysely } from 'kysely';
import type { ListEntry, ListKind, NumberListStore } from '../domain/number-lists.js';
import type { Database } from './schema.js';

/** The channel list changes are announced on (PostgreSQL), so that every instance reads the lists again. */
export const numberListsChannel = 'otp_number_lists';

/** Block and allow lists (contract 14) in the database; each change is announced by the transaction making it. */
export class SqlNumberListStore implements NumberListStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** PostgreSQL: NOTIFY other processes in the changing transaction. */
    private readonly announce: boolean,
  ) {}

  add(entry: ListEntry): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx
        .updateTable('number_lists')
        .set({ note: entry.note })
        .where('kind', '=', entry.kind)
        .where('value', '=', entry.value)
        .where(sql<boolean>`client_id IS NOT DISTINCT FROM ${entry.clientId}::uuid`)
        .returning('id')
        .executeTakeFirst();
      if (!existing) {
        await trx
          .insertInto('number_lists')
          .values({ kind: entry.kind, value: entry.value, client_id: entry.clientId, note: entry.note, created_at: entry.createdAt })
          .execute();
      }
      await this.announced(trx);
      return !existing;
    });
  }

  remove(kind: ListKind, value: string, clientId: string | null): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const removed = await trx
        .deleteFrom('number_lists')
        .where('kind', '=', kind)
        .where('value', '=', value)
        .where(sql<boolean>`client_id IS NOT DISTINCT FROM ${clientId}::uuid`)
        .executeTakeFirst();
      const any = Number(removed.numDeletedRows) > 0;
      if (any) await this.announced(trx);
      return any;
    });
  }

  async all(): Promise<ListEntry[]> {
    const rows = await this.db.selectFrom('number_lists').selectAll().orderBy('id').execute();
    return rows.map((r) => ({
      kind: r.kind === 'allow' ? 'allow' : 'block',
      value: r.value,
      clientId: r.client_id,
      note: r.note,
      createdAt: new Date(r.created_at),
    }));
  }

  private async announced(trx: Kysely<Database>): Promise<void> {
    if (this.announce) await sql`SELECT pg_notify(${numberListsChannel}, '')`.execute(trx);
  }
}
