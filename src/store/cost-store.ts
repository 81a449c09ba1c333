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

/** The key each grouping reads from a ledger row `c`. */
const keys: Readonly<Record<CostGrouping, RawBuilder<string | null>>> = {
  day: sql`to_char(c.sent_at at time zone 'UTC', 'YYYY-MM-DD')`,
  country: sql`c.region_code`,
  provider: sql`c.provider`,
  client: sql`c.client_id::text`,
  route: sql`c.channel || ' ' || c.route`,
};

/** The statement behind {@link SqlCostStore.groups}; exported so the bench can EXPLAIN exactly what runs. */
export function costGroupsQuery(by: CostGrouping, since: Date, before: Date): RawBuilder<GroupRow> {
  const key = keys[by];
  return sql<GroupRow>`
    SELECT ${key} AS key, count(*) AS sends, count(*) FILTER (WHERE c.cost IS NULL) AS unknown_sends,
      count(DISTINCT c.verification_id) FILTER (WHERE v.status = 'SUCCESS') AS verified, coalesce(sum(c.cost), 0)::text AS cost
    FROM send_costs c LEFT JOIN verifications v ON v.id = c.verification_id
    WHERE c.sent_at >= ${since} AND c.sent_at < ${before}
    GROUP BY 1`;
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
