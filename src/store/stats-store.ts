import { sql, type Kysely } from 'kysely';
import type { ClientDailyTraffic } from '../domain/stats.js';
import type { StatsStore, TrafficQuery } from '../domain/stats-store.js';
import { normalised } from './price-store.js';
import type { Database } from './schema.js';

/** Counts as the drivers return them: PostgreSQL's bigint and numeric come as text. */
type Count = string | number | bigint;

/**
 * The one statement behind the figures: a range of created_at, for one client, read through the
 * verifications_client_created index (client_id, created_at); every client's is a scan of the range. The day is
 * taken in UTC whatever the session's time zone.
 */
export function dailyTrafficQuery(db: Kysely<Database>, query: TrafficQuery) {
  const day = sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`;
  const counted = db
    .selectFrom('verifications')
    .select((eb) => [
      'client_id',
      day.as('day'),
      'region_code',
      'country_code',
      'delivery_channel',
      // A workflow's steps are sends as resends are (contract 13).
      eb.fn.sum<Count>(sql`send_requests + steps`).as('sends'),
      eb.fn.countAll<Count>().filterWhere('delivery_status', '=', 'DELIVERED').as('delivered'),
      eb.fn.countAll<Count>().filterWhere('status', '=', 'SUCCESS').as('verified'),
      // The ledger's rows of each verification (send_costs_verification): what its sends cost.
      sql<string>`coalesce(sum((SELECT sum(c.cost) FROM send_costs c WHERE c.verification_id = verifications.id)), 0)::text`.as('cost'),
    ])
    .where('created_at', '>=', query.since)
    .where('created_at', '<', query.before)
    .where('test_number', '=', false)
    .groupBy(['client_id', day, 'region_code', 'country_code', 'delivery_channel'])
    .$if(query.byProvider === true, (qb) => qb.select('delivery_provider').groupBy('delivery_provider'));
  return query.clientId === null ? counted : counted.where('client_id', '=', query.clientId);
}

/** Traffic figures in PostgreSQL or PGlite. */
export class SqlStatsStore implements StatsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async dailyTraffic(query: TrafficQuery): Promise<ClientDailyTraffic[]> {
    const rows = await dailyTrafficQuery(this.db, query).execute();
    return rows.map((row) => ({
      clientId: row.client_id,
      day: row.day,
      regionCode: row.region_code,
      countryCode: row.country_code,
      channel: row.delivery_channel,
      sends: Number(row.sends),
      delivered: Number(row.delivered),
      verified: Number(row.verified),
      cost: normalised(row.cost),
      costPerVerified: null,
      ...(query.byProvider === true && { provider: row.delivery_provider ?? null }),
    }));
  }
}

/** Sends and deliveries per channel and provider since a time, every client's, test numbers left out (the providers page). */
export async function providerTraffic(db: Kysely<Database>, since: Date): Promise<{ channel: string; provider: string; verifications: number; delivered: number }[]> {
  const rows = await db
    .selectFrom('verifications')
    .select((eb) => [
      'delivery_channel',
      'delivery_provider',
      eb.fn.countAll<Count>().as('verifications'),
      eb.fn.countAll<Count>().filterWhere('delivery_status', '=', 'DELIVERED').as('delivered'),
    ])
    .where('created_at', '>=', since)
    .where('test_number', '=', false)
    .where('delivery_provider', 'is not', null)
    .groupBy(['delivery_channel', 'delivery_provider'])
    .execute();
  return rows.map((r) => ({ channel: r.delivery_channel, provider: r.delivery_provider ?? '', verifications: Number(r.verifications), delivered: Number(r.delivered) }));
}

/**
 * Failed provider calls per channel and provider since a time (every client's, test numbers left out), from the
 * verifications' deliveries: each turn's calls less the one that got the code through; and the latest error any
 * of them recorded (an undelivered receipt's included).
 */
export async function providerFailures(
  db: Kysely<Database>,
  since: Date,
): Promise<{ channel: string; provider: string; failures: number; lastError: { code: string; message: string; at: string } | null }[]> {
  const { rows } = await sql<{ channel: string; provider: string; failures: Count; last_error: unknown }>`
    SELECT lower(e->>'channel') AS channel, e->>'provider' AS provider,
      sum(coalesce((e->>'attempts')::int, 1) - CASE WHEN e->>'status' IN ('SENT', 'DELIVERED', 'UNDELIVERED') THEN 1 ELSE 0 END) AS failures,
      (array_agg(e->'lastError' ORDER BY e->'lastError'->>'at' DESC) FILTER (WHERE jsonb_typeof(e->'lastError') = 'object'))[1] AS last_error
    FROM verifications v CROSS JOIN LATERAL jsonb_array_elements(v.deliveries) e
    WHERE v.created_at >= ${since} AND v.test_number = false
    GROUP BY 1, 2`.execute(db);
  return rows.map((r) => {
    const raw = typeof r.last_error === 'string' ? (JSON.parse(r.last_error) as unknown) : r.last_error;
    const e = raw as { code?: unknown; message?: unknown; at?: unknown } | null;
    const lastError = e && typeof e.code === 'string' && typeof e.message === 'string' && typeof e.at === 'string' ? { code: e.code, message: e.message, at: e.at } : null;
    return { channel: r.channel, provider: r.provider, failures: Number(r.failures), lastError };
  });
}
