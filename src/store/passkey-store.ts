import type { Kysely } from 'kysely';
import type { ChallengePurpose, PasskeyStore, PasskeyView, StoredPasskey } from '../console/passkeys.js';
import type { Database } from './schema.js';

/** Operators' passkeys and pending WebAuthn challenges, in PostgreSQL or PGlite. */
export class SqlPasskeyStore implements PasskeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async add(p: StoredPasskey, now: Date): Promise<boolean> {
    const added = await this.db
      .insertInto('operator_passkeys')
      .values({ credential_id: p.credentialId, operator_id: p.operatorId, public_key: p.publicKey, counter: p.counter, transports: [...p.transports], created_at: now })
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .returning('credential_id')
      .executeTakeFirst();
    return added !== undefined;
  }

  async ofOperator(operatorId: string): Promise<StoredPasskey[]> {
    const rows = await this.db.selectFrom('operator_passkeys').selectAll().where('operator_id', '=', operatorId).execute();
    return rows.map(passkey);
  }

  async find(credentialId: string): Promise<StoredPasskey | null> {
    const row = await this.db.selectFrom('operator_passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
    return row ? passkey(row) : null;
  }

  async setCounter(credentialId: string, counter: number): Promise<void> {
    await this.db.updateTable('operator_passkeys').set({ counter }).where('credential_id', '=', credentialId).execute();
  }

  async listed(operatorId: string): Promise<PasskeyView[]> {
    const rows = await this.db
      .selectFrom('operator_passkeys')
      .select(['credential_id', 'created_at', 'transports'])
      .where('operator_id', '=', operatorId)
      .orderBy('created_at')
      .orderBy('credential_id')
      .execute();
    return rows.map((r) => ({ id: r.credential_id, createdAt: r.created_at.toISOString(), transports: r.transports }));
  }

  async remove(credentialId: string, operatorId: string): Promise<boolean> {
    const deleted = await this.db.deleteFrom('operator_passkeys').where('credential_id', '=', credentialId).where('operator_id', '=', operatorId).executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  }

  async putChallenge(challenge: string, operatorId: string | null, purpose: ChallengePurpose, expiresAt: Date, now: Date): Promise<void> {
    // Unanswered challenges go as soon as they expire: the table stays as small as the sign-ins under way.
    await this.db.deleteFrom('operator_challenges').where('expires_at', '<=', now).execute();
    await this.db.insertInto('operator_challenges').values({ challenge, operator_id: operatorId, purpose, expires_at: expiresAt }).execute();
  }

  async takeChallenge(challenge: string, purpose: ChallengePurpose, now: Date): Promise<{ operatorId: string | null } | undefined> {
    const row = await this.db
      .deleteFrom('operator_challenges')
      .where('challenge', '=', challenge)
      .where('purpose', '=', purpose)
      .where('expires_at', '>', now)
      .returning('operator_id')
      .executeTakeFirst();
    return row ? { operatorId: row.operator_id } : undefined;
  }
}

function passkey(row: { credential_id: string; operator_id: string; public_key: string; counter: string; transports: string[] }): StoredPasskey {
  return { credentialId: row.credential_id, operatorId: row.operator_id, publicKey: row.public_key, counter: Number(row.counter), transports: row.transports };
}
