import type { Kysely } from 'kysely';
import type { AuditEntry, AuditLog } from '../console/audit-log.js';
import type { Database } from './schema.js';

/** The audit log in PostgreSQL or PGlite. */
export class SqlAuditLog implements AuditLog {
  constructor(private readonly db: Kysely<Database>) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({ at: new Date(entry.at), actor: entry.actor, action: entry.action, target: entry.target, outcome: entry.outcome })
      .execute();
  }

  async latest(limit: number): Promise<AuditEntry[]> {
    const rows = await this.db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(limit).execute();
    return rows.map((r) => ({ at: r.at.toISOString(), actor: r.actor, action: r.action, target: r.target, outcome: r.outcome }));
  }
}
