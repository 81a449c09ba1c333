import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { CaptchaTokenStore } from '../domain/captcha.js';
import type { Database } from './schema.js';

/** CAPTCHA tokens accepted lately (contract 14), shared by every instance through the database. */
export class SqlCaptchaTokenStore implements CaptchaTokenStore {
  constructor(private readonly db: Kysely<Database>) {}

  async claim(token: string, now: Date, since: Date): Promise<boolean> {
    const hash = createHash('sha256').update(token).digest('hex');
    // One statement: a concurrent claim of the same token waits on the row and then finds it taken.
    const row = await this.db
      .insertInto('captcha_tokens')
      .values({ token_hash: hash, used_at: now })
      .onConflict((oc) => oc.column('token_hash').doUpdateSet({ used_at: sql`excluded.used_at` }).where('captcha_tokens.used_at', '<', since))
      .returning('token_hash')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Forgets tokens accepted before `before`: a provider refuses them by then anyway. */
  async prune(before: Date): Promise<void> {
    await this.db.deleteFrom('captcha_tokens').where('used_at', '<', before).execute();
  }
}
