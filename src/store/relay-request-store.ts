import type { Kysely } from 'kysely';
import type { RelayAnswer, RelayRequests } from '../domain/relay-requests.js';
import type { Database } from './schema.js';

/** Relay requests seen, in the shared database: one claim per request across every instance (its primary key). */
export class SqlRelayRequestStore implements RelayRequests {
  constructor(private readonly db: Kysely<Database>) {}

  async claim(clientId: string, key: string, now: Date): Promise<{ kind: 'claimed' } | { kind: 'seen'; answer: RelayAnswer | null }> {
    const inserted = await this.db
      .insertInto('relay_requests')
      .values({ client_id: clientId, request_key: key, created_at: now, answer: null })
      .onConflict((oc) => oc.columns(['client_id', 'request_key']).doNothing())
      .returning('client_id')
      .executeTakeFirst();
    if (inserted) return { kind: 'claimed' };
    const seen = await this.db.selectFrom('relay_requests').select('answer').where('client_id', '=', clientId).where('request_key', '=', key).executeTakeFirst();
    const raw = typeof seen?.answer === 'string' ? (JSON.parse(seen.answer) as unknown) : (seen?.answer ?? null);
    return { kind: 'seen', answer: isAnswer(raw) ? raw : null };
  }

  async answered(clientId: string, key: string, answer: RelayAnswer): Promise<void> {
    await this.db.updateTable('relay_requests').set({ answer: JSON.stringify(answer) }).where('client_id', '=', clientId).where('request_key', '=', key).execute();
  }

  async prune(before: Date): Promise<void> {
    await this.db.deleteFrom('relay_requests').where('created_at', '<', before).execute();
  }
}

function isAnswer(raw: unknown): raw is RelayAnswer {
  return typeof raw === 'object' && raw !== null && typeof (raw as { status?: unknown }).status === 'number';
}
