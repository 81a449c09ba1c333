import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Deletes history older than `before`, at most `batch` rows of each kind per call so that no statement holds
 * locks for long: webhook events that were delivered or had nowhere to go (their attempts go with them),
 * stored messages, finished send jobs, which verification each provider message id was for, receipts kept for a send never recorded, the signals creates came with, and number lookups (a lookup is a snapshot of the metadata of its day, not
 * worth keeping for good); prefix blocks and country throttles that ended, clients' daily send counts of days gone
 * by, budgeted clients' spend of days and months that ended before `before`, and the refusals kept for the verdicts. Verifications are records the clients read back and stay; failed events stay for the
 * operator to replay. Returns how many rows went.
 */
export async function pruneHistory(db: Kysely<Database>, before: Date, batch = 5_000): Promise<number> {
  const events = await db
    .deleteFrom('events')
    .where('id', 'in', (qb) =>
      qb
        .selectFrom('events')
        .select('id')
        .where('delivery_status', 'in', ['delivered', 'none'])
        .where('created_at', '<', before)
        .limit(batch),
    )
    .executeTakeFirst();
  const messages = await db
    .deleteFrom('messages')
    .where('id', 'in', (qb) => qb.selectFrom('messages').select('id').where('created_at', '<', before).limit(batch))
    .executeTakeFirst();
  const jobs = await db
    .deleteFrom('send_jobs')
    .where('verification_id', 'in', (qb) =>
      qb
        .selectFrom('send_jobs')
        .select('verification_id')
        .where('status', '<>', 'pending')
        .where('updated_at', '<', before)
        .limit(batch),
    )
    .executeTakeFirst();
  // Which verification a provider's message id was for: receipts come within days, not weeks.
  const providerMessages = await db
    .deleteFrom('provider_messages')
    .where(
      sql<boolean>`(provider, account, message_id) IN (SELECT provider, account, message_id FROM provider_messages WHERE created_at < ${before} LIMIT ${batch})`,
    )
    .executeTakeFirst();
  const parked = await db
    .deleteFrom('parked_receipts')
    .where('id', 'in', (qb) => qb.selectFrom('parked_receipts').select('id').where('received_at', '<', before).limit(batch))
    .executeTakeFirst();
  const refusals = await db
    .deleteFrom('risk_refusals')
    .where('id', 'in', (qb) => qb.selectFrom('risk_refusals').select('id').where('refused_at', '<', before).limit(batch))
    .executeTakeFirst();
  const lookups = await db
    .deleteFrom('lookups')
    .where('id', 'in', (qb) => qb.selectFrom('lookups').select('id').where('created_at', '<', before).limit(batch))
    .executeTakeFirst();
  // The signals a create came with (contract 14): the verification stays, what it said of the end user goes.
  const signals = await db
    .updateTable('verifications')
    .set({ signal_ip: null, signal_network: null, signal_device: null, signals: null })
    .where('id', 'in', (qb) => qb.selectFrom('verifications').select('id').where('signals', 'is not', null).where('created_at', '<', before).limit(batch))
    .executeTakeFirst();
  // Few rows (one per block, throttle, or client and day): no batch needed.
  const blocks = await db.deleteFrom('prefix_blocks').where('blocked_until', '<', before).executeTakeFirst();
  const throttles = await db.deleteFrom('country_throttles').where('throttled_until', '<', before).executeTakeFirst();
  const clientThrottles = await db.deleteFrom('client_throttles').where('throttled_until', '<', before).executeTakeFirst();
  const resendThrottles = await db.deleteFrom('resend_throttles').where('throttled_until', '<', before).executeTakeFirst();
  const dailySends = await db.deleteFrom('client_daily_sends').where('day', '<', before.toISOString().slice(0, 10)).executeTakeFirst();
  // A budget counts only today's and this month's spend (contract 17); what was spent stays in the cost ledger.
  const beforeDay = before.toISOString().slice(0, 10);
  const spend = await db
    .deleteFrom('client_spend')
    .where((eb) =>
      eb.or([
        eb.and([eb('period', '=', 'day'), eb('starts', '<', beforeDay)]),
        eb.and([eb('period', '=', 'month'), eb(sql<string>`starts + interval '1 month'`, '<=', sql<string>`${beforeDay}::date`)]),
      ]),
    )
    .executeTakeFirst();
  const deleted = [events, messages, jobs, providerMessages, parked, lookups, blocks, throttles, clientThrottles, resendThrottles, dailySends, spend, refusals].reduce((n, r) => n + Number(r.numDeletedRows), 0);
  return deleted + Number(signals.numUpdatedRows);
}
