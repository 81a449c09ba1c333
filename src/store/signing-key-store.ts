import type { Kysely } from 'kysely';
import type { SigningKeyStore } from '../oauth/token-service.js';
import type { Database } from './schema.js';

export class SqlSigningKeyStore implements SigningKeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async currentKey(createSecret: () => Buffer) {
    const existing = await this.newest();
    if (existing) return existing;
    // Two instances starting together: the insert of one wins and both read the same newest key.
    await this.db
      .insertInto('signing_keys')
      .values({ id: 'initial', secret: createSecret().toString('base64'), created_at: new Date() })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    const created = await this.newest();
    if (!created) throw new Error('signing key was not stored');
    return created;
  }

  private async newest() {
    const row = await this.db
      .selectFrom('signing_keys')
      .select(['id', 'secret'])
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? { id: row.id, secret: Buffer.from(row.secret, 'base64') } : null;
  }
}
