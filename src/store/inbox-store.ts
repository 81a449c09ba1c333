import type { Kysely, SelectQueryBuilder } from 'kysely';
import { parseChannel } from '../domain/channel-driver.js';
import type { Clock } from '../domain/ports.js';
import { effectiveStatus, type Verification } from '../domain/verification.js';
import type { InboxMessage, InboxSource, InboxState } from '../inbox/inbox-message.js';
import type { Database } from './schema.js';
import { isUuid } from './uuid.js';
import { toVerification } from './verification-rows.js';

/** The messages table joined to each message's verification (for its code and state). */
type Joined = SelectQueryBuilder<Database & { m: Database['messages'] }, 'm', object>;

/** What the development inbox reads: the messages the log provider stored, with their verifications. */
export class SqlInboxStore implements InboxSource {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async latest(limit: number, to: string | null): Promise<InboxMessage[]> {
    let query = this.db.selectFrom('messages as m');
    if (to !== null) query = query.where('m.recipient', '=', to);
    return this.read(query.orderBy('m.id', 'desc').limit(limit));
  }

  async recent(afterId: number, since: Date, limit: number, to: string | null): Promise<InboxMessage[]> {
    let query = this.db
      .selectFrom('messages as m')
      .where((eb) => eb.or([eb('m.id', '>', afterId), eb('m.created_at', '>=', since)]));
    if (to !== null) query = query.where('m.recipient', '=', to);
    return this.read(query.orderBy('m.id', 'asc').limit(limit));
  }

  async states(verificationIds: readonly string[]): Promise<InboxState[]> {
    const ids = verificationIds.filter(isUuid);
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('verifications').selectAll().where('id', 'in', ids).execute();
    const now = this.clock.now();
    return rows.map((r) => stateOf(toVerification(r), now));
  }

  /** The messages of `query` with their verifications, in the query's order. */
  private async read(query: Joined): Promise<InboxMessage[]> {
    const rows = await query
      .select(['m.id', 'm.verification_id', 'm.channel', 'm.recipient', 'm.sender', 'm.body', 'm.created_at'])
      .execute();
    const ids = [...new Set(rows.map((r) => r.verification_id))];
    const verifications = new Map<string, Verification>();
    if (ids.length > 0) {
      const found = await this.db.selectFrom('verifications').selectAll().where('id', 'in', ids).execute();
      for (const row of found) verifications.set(row.id, toVerification(row));
    }
    const now = this.clock.now();
    return rows.map((r) => {
      const channel = parseChannel(r.channel) ?? 'sms';
      const v = verifications.get(r.verification_id);
      return {
        // bigserial: node-postgres hands int8 over as a string.
        id: Number(r.id),
        at: new Date(r.created_at).toISOString(),
        channel,
        to: r.recipient,
        from: r.sender,
        text: channel === 'call' ? null : r.body,
        callerId: channel === 'call' ? r.sender : null,
        code: v ? v.otp : null,
        verificationId: r.verification_id,
        // Only the log provider stores what it sends, and a test number's create, which reaches no provider.
        provider: v?.testNumber ? 'test' : 'log',
        testNumber: v?.testNumber ?? false,
        state: v ? stateOf(v, now) : null,
      };
    });
  }
}

function stateOf(v: Verification, now: Date): InboxState {
  return { verificationId: v.id, status: effectiveStatus(v, now), deliveryStatus: v.delivery.status };
}
