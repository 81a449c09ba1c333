import type { Kysely } from 'kysely';
import type { MessageLog } from '../providers/log-providers.js';
import type { Database } from './schema.js';

/** Messages and calls the log providers stored. */
export class SqlMessageStore implements MessageLog {
  constructor(private readonly db: Kysely<Database>) {}

  async record(entry: Parameters<MessageLog['record']>[0]): Promise<number> {
    const row = await this.db
      .insertInto('messages')
      .values({
        verification_id: entry.verificationId,
        channel: entry.channel,
        recipient: entry.recipient,
        sender: entry.sender,
        body: entry.body,
        created_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
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
