import type { FieldProblem } from './error-catalogue.js';
import { per, type Amount } from './money.js';
import { statsRange, type StatsQuery, type StatsRange } from './stats.js';

/** What `otp-service costs --by` groups the ledger by (contract 17). */
export const costGroupings = ['day', 'country', 'provider', 'client', 'route'] as const;
export type CostGrouping = (typeof costGroupings)[number];

/** One group of the ledger's sends, as the store adds them up. */
export interface CostGroup {
  /** The day (YYYY-MM-DD, UTC, of the send), the country (ISO 3166 alpha-2), provider, client id, or `channel destination` of the route; null: not known. */
  readonly key: string | null;
  /** Sends a provider took. */
  readonly sends: number;
  /** Of them, those whose cost is not known (not in `cost`). */
  readonly unknownSends: number;
  /** Verifications with a send in the group that ended SUCCESS. */
  readonly verified: number;
  readonly cost: Amount;
}

/** The cost ledger (port): rows per send a provider took. */
export interface CostStore {
  /** The sends made in [since, before), grouped `by`, in no particular order. */
  groups(by: CostGrouping, since: Date, before: Date): Promise<CostGroup[]>;
}

/** A group as `costs` shows it: the key under the grouping's name, and what a verified code cost. */
export type CostRow = { readonly [by: string]: string | number | null } & {
  readonly sends: number;
  readonly verified: number;
  readonly cost: Amount;
  readonly costPerVerified: Amount | null;
  readonly unknownSends: number;
};

export type CostReport = { readonly kind: 'ok'; readonly range: StatsRange; readonly rows: CostRow[] } | { readonly kind: 'invalid'; readonly problems: FieldProblem[] };

/** The ledger over the days asked for (the last 7 by default, as stats), grouped `by`. */
export async function costReport(store: CostStore, by: CostGrouping, query: StatsQuery, now: Date): Promise<CostReport> {
  const asked = statsRange(query, now);
  if ('problems' in asked) return { kind: 'invalid', problems: asked.problems };
  // In code point order, nulls last, whatever the database's collation.
  const groups = (await store.groups(by, asked.range.since, asked.range.before)).sort((a, b) =>
    a.key === b.key ? 0 : a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : 1,
  );
  return {
    kind: 'ok',
    range: asked.range,
    rows: groups.map((g) => ({ [by]: g.key, sends: g.sends, verified: g.verified, cost: g.cost, costPerVerified: per(g.cost, g.verified), unknownSends: g.unknownSends })),
  };
}
