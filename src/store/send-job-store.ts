import { sql, type Kysely } from 'kysely';
import type { Channel } from '../domain/verification-store.js';
import { Batcher } from './batcher.js';
import type { Database } from './schema.js';

/** A claimed job to send one verification's code. */
export interface SendJob {
  readonly verificationId: string;
  readonly channel: Channel;
  /** E.164 the code is sent from. */
  readonly sender: string;
  /** Attempts so far, this one included. */
  readonly attempts: number;
}

/** The durable queue of codes to send (port of the send worker). */
export interface SendJobStore {
  /** Claims due jobs for `leaseMs`: another worker sees them again only if this one dies. */
  claimDue(now: Date, leaseMs: number, limit: number): Promise<SendJob[]>;
  complete(verificationId: string, now: Date): Promise<void>;
  retryAt(verificationId: string, at: Date, error: string, now: Date): Promise<void>;
  fail(verificationId: string, error: string, now: Date): Promise<void>;
}

export class SqlSendJobStore implements SendJobStore {
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
      .returning(['verification_id', 'channel', 'sender', 'attempts'])
      .execute();
    return rows.map((r) => ({
      verificationId: r.verification_id,
      channel: r.channel === 'call' ? 'call' : 'sms',
      sender: r.sender,
      attempts: r.attempts,
    }));
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
