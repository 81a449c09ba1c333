import { sql, type Kysely } from 'kysely';
import type { OperatorRecord, OperatorStore, OperatorView, SessionRecord } from '../console/operator-service.js';
import type { Database } from './schema.js';
import { isUuid } from './uuid.js';

/** Console operators, their links and sessions, in PostgreSQL or PGlite. */
export class SqlOperatorStore implements OperatorStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(operator: { id: string; email: string; createdAt: Date }, link: { tokenHash: string; expiresAt: Date }): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('operators')
        .values({ id: operator.id, email: operator.email, password_hash: null, created_at: operator.createdAt, disabled_at: null })
        .onConflict((oc) => oc.column('email').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return false;
      await trx.insertInto('operator_links').values({ token_hash: link.tokenHash, operator_id: operator.id, expires_at: link.expiresAt, used_at: null }).execute();
      return true;
    });
  }

  async list(): Promise<OperatorView[]> {
    const rows = await this.db
      .selectFrom('operators as o')
      .select((eb) => [
        'o.id',
        'o.email',
        'o.created_at',
        'o.disabled_at',
        'o.password_hash',
        eb.selectFrom('operator_passkeys as p').whereRef('p.operator_id', '=', 'o.id').select(eb.fn.countAll<string | number>().as('n')).as('passkeys'),
      ])
      .orderBy('o.created_at')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      email: r.email,
      createdAt: r.created_at.toISOString(),
      disabledAt: r.disabled_at?.toISOString() ?? null,
      hasPassword: r.password_hash !== null,
      passkeys: Number(r.passkeys ?? 0),
    }));
  }

  async byEmail(email: string): Promise<OperatorRecord | null> {
    const row = await this.db.selectFrom('operators').selectAll().where('email', '=', email).executeTakeFirst();
    return row ? record(row) : null;
  }

  async byId(id: string): Promise<OperatorRecord | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? record(row) : null;
  }

  async disable(id: string, now: Date): Promise<boolean> {
    if (!isUuid(id)) return false;
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx.updateTable('operators').set({ disabled_at: sql<Date>`coalesce(disabled_at, ${now})` }).where('id', '=', id).executeTakeFirst();
      await trx.deleteFrom('operator_sessions').where('operator_id', '=', id).execute();
      return Number(updated.numUpdatedRows) > 0;
    });
  }

  async addLink(operatorId: string, link: { tokenHash: string; expiresAt: Date }): Promise<boolean> {
    if (!isUuid(operatorId)) return false;
    const operator = await this.db.selectFrom('operators').select('id').where('id', '=', operatorId).where('disabled_at', 'is', null).executeTakeFirst();
    if (!operator) return false;
    // A new link replaces the operator's earlier unused ones: a link sent to the wrong place is ended by the next.
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('operator_links').where('operator_id', '=', operatorId).where('used_at', 'is', null).execute();
      await trx.insertInto('operator_links').values({ token_hash: link.tokenHash, operator_id: operatorId, expires_at: link.expiresAt, used_at: null }).execute();
    });
    return true;
  }

  async useLink(tokenHash: string, now: Date): Promise<string | null> {
    const row = await this.db
      .updateTable('operator_links')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('operator_id')
      .executeTakeFirst();
    return row?.operator_id ?? null;
  }

  async changePassword(operatorId: string, hash: string, keepSessionIdHash: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('operators').set({ password_hash: hash }).where('id', '=', operatorId).execute();
      await trx.deleteFrom('operator_sessions').where('operator_id', '=', operatorId).where('id_hash', '!=', keepSessionIdHash).execute();
    });
  }

  async createSession(idHash: string, operatorId: string, now: Date): Promise<void> {
    await this.db.insertInto('operator_sessions').values({ id_hash: idHash, operator_id: operatorId, created_at: now, last_seen_at: now }).execute();
  }

  async findSession(idHash: string): Promise<SessionRecord | null> {
    const row = await this.db.selectFrom('operator_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
    return row ? { operatorId: row.operator_id, createdAt: row.created_at, lastSeenAt: row.last_seen_at } : null;
  }

  async touchSession(idHash: string, now: Date): Promise<void> {
    await this.db.updateTable('operator_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.deleteFrom('operator_sessions').where('id_hash', '=', idHash).execute();
  }
}

function record(row: { id: string; email: string; password_hash: string | null; created_at: Date; disabled_at: Date | null }): OperatorRecord {
  return { id: row.id, email: row.email, passwordHash: row.password_hash, createdAt: row.created_at, disabledAt: row.disabled_at };
}
