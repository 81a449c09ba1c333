import { sql, type Kysely } from 'kysely';
import { parseChannel } from '../domain/channel-driver.js';
import type { SendJob } from '../domain/send-job.js';
import { Batcher } from './batcher.js';
import type { Database } from './schema.js';

/** Send jobs in PostgreSQL or PGlite (the send worker's queue). */
export class SqlSendJobStore {
  /** Completions are frequent and independent: concurrent ones share one statement and one commit. */
  private readonly completions: Batcher<{ verificationId: string; now: Date }>;

  constructor(private readonly db: Kysely<Database>) {
    this.completions = new Batcher<{ verificationId: string; now: Date }>(async (done) => {
      const now = done.reduce((latest, d) => (d.now > latest ? d.now : latest), new Date(0));
      await this.db
        .updateTable('send_jobs')
        .set({ status: 'sent', updated_at: now })
        .where('verification_id', 'in', done.map((d) => d.verificationId))
        .execute();
      return done.map(() => undefined);
    });
  }

  async claimDue(now: Date, leaseMs: number, limit: number): Promise<SendJob[]> {
    const rows = await this.db
      .updateTable('send_jobs')
      .set({
        next_attempt_at: new Date(now.getTime() + leaseMs),
        attempts: sql`attempts + 1`,
        updated_at: now,
      })
      .where('verification_id', 'in', (qb) =>
        qb
          .selectFrom('send_jobs')
          .select('verification_id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .orderBy('next_attempt_at')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returning(['verification_id', 'channel', 'sender', 'attempts', 'next_attempt_at', 'created_at'])
      .execute();
    return rows.map((r) => {
      const channel = parseChannel(r.channel);
      // A job keeps the channel it was written with; one no driver knows is an error, never another channel.
      if (!channel) throw new Error(`send job ${r.verification_id} has unknown channel "${r.channel}"`);
      return {
        verificationId: r.verification_id,
        channel,
        sender: r.sender,
        attempts: r.attempts,
        claimedUntil: r.next_attempt_at,
        createdAt: r.created_at,
      };
    });
  }

  complete(verificationId: string, now: Date): Promise<void> {
    return this.completions.add({ verificationId, now });
  }

  async retryAt(verificationId: string, at: Date, error: string, now: Date): Promise<void> {
    await this.finish(verificationId, { next_attempt_at: at, last_error: error, updated_at: now });
  }

  async fail(verificationId: string, error: string, now: Date): Promise<void> {
    await this.finish(verificationId, { status: 'failed', last_error: error, updated_at: now });
  }

  private async finish(
    verificationId: string,
    change: { status?: string; next_attempt_at?: Date; last_error?: string; updated_at: Date },
  ): Promise<void> {
    await this.db.updateTable('send_jobs').set(change).where('verification_id', '=', verificationId).execute();
  }
}
