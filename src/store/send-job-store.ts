import { sql, type Kysely } from 'kysely';
import type { JobOwnership, SendJob } from '../domain/send-job.js';
import type { Database } from './schema.js';
import { toSendJob } from './verification-rows.js';

/** Send jobs in PostgreSQL or PGlite, as the send worker claims them; their outcomes are the domain's scripts. */
export class SqlSendJobStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Claims due jobs for `leaseMs`, skipping rows other workers hold and jobs meant for a provider `takes` does not
   * name; the claim counts as an attempt.
   */
  async claimDue(now: Date, leaseMs: number, limit: number, takes: readonly JobOwnership[]): Promise<SendJob[]> {
    const leaseEnd = new Date(now.getTime() + leaseMs);
    // (channel, provider) pairs taken; '' stands for a job that names no provider.
    const pairs = takes.flatMap((t) => [...t.providers, ...(t.unassigned ? [''] : [])].map((provider) => ({ channel: t.channel, provider })));
    if (pairs.length === 0) return [];
    const rows = await this.db
      .updateTable('send_jobs')
      .set({ next_attempt_at: leaseEnd, attempts: sql`attempts + 1`, updated_at: now })
      .where('verification_id', 'in', (qb) =>
        qb
          .selectFrom('send_jobs')
          .select('verification_id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          // One index range per pair (send_jobs_due): jobs of other providers are never read.
          .where(
            sql<boolean>`(${sql.join(
              pairs.map((p) => sql`(channel = ${p.channel} AND coalesce(provider, '') = ${p.provider})`),
              sql` OR `,
            )})`,
          )
          .orderBy('next_attempt_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .execute();
    return rows.map((r) => toSendJob(r, leaseEnd));
  }
}
