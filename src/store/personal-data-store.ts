import { sql, type Kysely, type Transaction } from 'kysely';
import type { Clock } from '../domain/ports.js';
import type { Erased, ErasureSelection, PersonalDataStore } from '../domain/personal-data.js';
import type { Database } from './schema.js';
import { isUuid } from './uuid.js';

/** Erasure in PostgreSQL or PGlite: one transaction, the verifications locked first as every script locks them. */
export class SqlPersonalDataStore implements PersonalDataStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  erase(selection: ErasureSelection): Promise<Erased> {
    return this.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const ids = await this.lockSelected(trx, selection);
      const counted = (r: { numDeletedRows?: bigint; numUpdatedRows?: bigint }[]) => Number(r[0]?.numDeletedRows ?? r[0]?.numUpdatedRows ?? 0);
      let verifications = 0;
      let messages = 0;
      let webhookEvents = 0;
      if (ids.length > 0) {
        // The number keeps its prefix (left(phone_number, -3), what prefix counts read), as reducedNumber writes
        // it; a PENDING one ends CANCELED, so that nothing is sent, expired or stepped for it any more.
        const updated = await sql`
          UPDATE verifications SET phone_number = left(phone_number, -3) || 'XXX', otp = '', reference = NULL, message_text = NULL,
            signal_ip = NULL, signal_network = NULL, signal_device = NULL, signals = NULL, webhook_url = NULL, next_step_at = NULL, failover_at = NULL,
            failure_reason = CASE WHEN status = 'PENDING' THEN 'CANCELED' ELSE failure_reason END,
            status = CASE WHEN status = 'PENDING' THEN 'FAILED' ELSE status END,
            erased_at = ${now}, updated_at = ${now}
          WHERE id = ANY(${ids}::uuid[])`.execute(trx);
        verifications = Number(updated.numAffectedRows ?? 0);
        messages = counted(await trx.deleteFrom('messages').where('verification_id', 'in', ids).execute());
        webhookEvents = counted(await trx.deleteFrom('events').where('verification_id', 'in', ids).execute());
        await trx.deleteFrom('send_jobs').where('verification_id', 'in', ids).execute();
        await trx.deleteFrom('provider_messages').where('verification_id', 'in', ids).execute();
        await trx.deleteFrom('idempotency_keys').where('verification_id', 'in', ids).execute();
      }
      let lookups = 0;
      let listEntries = 0;
      if (selection.kind === 'number') {
        let looked = trx.deleteFrom('lookups').where('phone_number', '=', selection.phoneNumber);
        if (selection.clientId !== null) looked = looked.where('client_id', '=', selection.clientId);
        lookups = counted(await looked.execute());
        // The refusals kept for the verdicts name the number: they go, and with them what they counted.
        let refusals = trx.deleteFrom('risk_refusals').where('phone_number', '=', selection.phoneNumber);
        if (selection.clientId !== null) refusals = refusals.where('client_id', '=', selection.clientId);
        await refusals.execute();
        // A block must still block the number: its entry stays, without what an operator wrote of the person.
        let listed = trx.updateTable('number_lists').set({ note: null }).where('value', '=', selection.phoneNumber).where('note', 'is not', null);
        if (selection.clientId !== null) listed = listed.where('client_id', '=', selection.clientId);
        listEntries = counted(await listed.execute());
      }
      return { verifications, messages, webhookEvents, lookups, listEntries };
    });
  }

  /** The ids of the verifications selected that are not erased yet, locked in id order. */
  private async lockSelected(trx: Transaction<Database>, selection: ErasureSelection): Promise<string[]> {
    let query = trx.selectFrom('verifications').select('id').where('erased_at', 'is', null);
    switch (selection.kind) {
      case 'verification':
        if (!isUuid(selection.id)) return [];
        query = query.where('id', '=', selection.id).where('client_id', '=', selection.clientId);
        break;
      case 'number':
        // Each client's (client_id, phone_number, created_at) index, as the operator's search reads a number.
        query = query
          .where('phone_number', '=', selection.phoneNumber)
          .where('client_id', 'in', selection.clientId !== null ? [selection.clientId] : trx.selectFrom('clients').select('id'));
        break;
      case 'older':
        query = query.where('created_at', '<', selection.before).orderBy('created_at').limit(selection.limit);
        break;
    }
    const found = (await query.execute()).map((r) => r.id).sort();
    if (found.length === 0) return [];
    const locked = await trx.selectFrom('verifications').select('id').where('id', 'in', found).where('erased_at', 'is', null).orderBy('id').forUpdate().execute();
    return locked.map((r) => r.id);
  }
}
