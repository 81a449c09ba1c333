import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { CostGroup, CostGrouping, CostStore } from '../domain/cost-report.js';
import { normalised } from './price-store.js';
import type { Database } from './schema.js';

type Count = string | number | bigint;

interface GroupRow {
  readonly key: string | null;
  readonly sends: Count;
  readonly unknown_sends: Count;
  readonly verified: Count;
  readonly cost: string;
}

/**
 * Each grouping: the value a ledger row `c` is grouped by, and that value `u.key` as the answer shows it. Grouped by
 * the plain column where one exists and turned into text once per group, not once per row: a day is grouped as its
 * UTC midnight (to_char on every row cost more than the rest of the scan), a client as its uuid.
 *
 * The day is date_bin's: arithmetic on the instant, where `at time zone 'UTC'` looked the zone up and converted every
 * row, twice a million times over 30 days (a tenth of --by day's work). Its statistics (migration 0042) tell the
 * planner there are a few hundred days, not a group per send, so it still aggregates in parallel.
 */
const keys: Readonly<Record<CostGrouping, { readonly group: RawBuilder<unknown>; readonly shown: RawBuilder<string | null> }>> = {
  day: { group: sql`date_bin('1 day', c.sent_at, '2000-01-01 00:00:00+00')`, shown: sql`to_char(u.key at time zone 'UTC', 'YYYY-MM-DD')` },
  country: { group: sql`c.region_code`, shown: sql`u.key` },
  provider: { group: sql`c.provider`, shown: sql`u.key` },
  client: { group: sql`c.client_id`, shown: sql`u.key::text` },
  route: { group: sql`c.channel || ' ' || c.route`, shown: sql`u.key` },
};

/**
 * The statement behind {@link SqlCostStore.groups}; exported so the bench can EXPLAIN exactly what runs.
 *
 * Two aggregates of the range, added up by key. The sends, unknown sends and cost need no verification: a hash
 * aggregate of the ledger alone, which PostgreSQL runs in parallel. Only the verified count reads verifications, and
 * only the SUCCESS ones (the join's condition; their ids from verifications_success, 0038), so its hash holds those
 * ids alone; each group's distinct verifications are then counted over those sends only. One aggregate with
 * count(DISTINCT) over a LEFT JOIN of every send to every verification (as before) sorted all the joined rows, a
 * million over 30 days, to disk, and hashed every verification in several batches: 1.4 to 2.2 times the time
 * (bench/README.md, costs).
 */
export function costGroupsQuery(by: CostGrouping, since: Date, before: Date): RawBuilder<GroupRow> {
  const { group, shown } = keys[by];
  return sql<GroupRow>`
    SELECT ${shown} AS key, sum(u.sends) AS sends, sum(u.unknown_sends) AS unknown_sends, sum(u.verified) AS verified,
      coalesce(sum(u.cost), 0)::text AS cost
    FROM (
      SELECT ${group} AS key, count(*) AS sends, count(*) FILTER (WHERE c.cost IS NULL) AS unknown_sends, 0 AS verified, sum(c.cost) AS cost
      FROM send_costs c
      WHERE c.sent_at >= ${since} AND c.sent_at < ${before}
      GROUP BY 1
      UNION ALL
      SELECT ${group}, 0, 0, count(DISTINCT c.verification_id), NULL
      FROM send_costs c JOIN verifications v ON v.id = c.verification_id AND v.status = 'SUCCESS'
      WHERE c.sent_at >= ${since} AND c.sent_at < ${before}
      GROUP BY 1
    ) u
    GROUP BY u.key`;
}

/**
 * The cost ledger (send_costs) in PostgreSQL or PGlite: a range of sent_at through send_costs_sent, each group's
 * verified codes read from its verifications (gone ones, erased by retention, count as not verified).
 */
export class SqlCostStore implements CostStore {
  constructor(private readonly db: Kysely<Database>) {}

  async groups(by: CostGrouping, since: Date, before: Date): Promise<CostGroup[]> {
    const { rows } = await costGroupsQuery(by, since, before).execute(this.db);
    return rows.map((r) => ({ key: r.key, sends: Number(r.sends), unknownSends: Number(r.unknown_sends), verified: Number(r.verified), cost: normalised(r.cost) }));
  }
}
