import type { Kysely } from 'kysely';
import type { Clock } from '../domain/ports.js';
import type { LoggedMessage, MessageLog } from '../channels/provider-port.js';
import { Batcher } from './batcher.js';
import type { Database } from './schema.js';

/** Messages and calls the log providers stored; concurrent ones are written together in one statement. */
export class SqlMessageStore implements MessageLog {
  private readonly writes: Batcher<LoggedMessage & { at: Date }>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {
    this.writes = new Batcher<LoggedMessage & { at: Date }>(async (entries) => {
      await this.db
        .insertInto('messages')
        .values(
          entries.map((e) => ({
            verification_id: e.verificationId,
            channel: e.channel,
            recipient: e.recipient,
            sender: e.sender,
            body: e.body,
            created_at: e.at,
          })),
        )
        .execute();
      return entries.map(() => undefined);
    });
  }

  record(entry: LoggedMessage): Promise<void> {
    return this.writes.add({ ...entry, at: this.clock.now() });
  }

  /** What was sent for one verification, oldest first. */
  async forVerification(verificationId: string) {
    return this.db
      .selectFrom('messages')
      .select(['channel', 'recipient', 'sender', 'body', 'created_at'])
      .where('verification_id', '=', verificationId)
      .orderBy('id')
      .execute();
  }
}
