import Big from 'big.js';

/**
 * Spend as the overview reads it from the stats rows: each row's `cost` is a decimal string in COST_CURRENCY, summed
 * here exactly (big.js, as the service sums it) for the figures shown as text; the charts draw Number() of them.
 */

/** A decimal string: an amount of COST_CURRENCY. */
export type Amount = string;

export function add(a: Amount, b: Amount): Amount {
  return new Big(a).plus(b).toFixed();
}

/** `cost / verified` to 6 decimals, rounded half up as the service's costPerVerified is; null when none was verified. */
export function perVerified(cost: Amount, verified: number): Amount | null {
  return verified > 0 ? new Big(cost).div(verified).round(6, Big.roundHalfUp).toFixed() : null;
}

/** The most series a spend chart draws one by one; the rest are added up as "Other". */
const maxSeries = 6;

/** One group's spend on each day shown (0 on days it spent nothing), and over them all. */
export interface SpendLine {
  readonly label: string;
  readonly perDay: readonly Amount[];
  readonly total: Amount;
}

/**
 * Spend per day of each group `key` names (a country, a provider), the biggest spenders first; past the 6th, the
 * others as one line "Other". Groups with traffic but no spend are kept: a country sent to at no known price is
 * worth seeing at 0.
 */
export function spendPerDay<R extends { readonly day: string; readonly cost: Amount }>(rows: readonly R[], days: readonly string[], key: (r: R) => string): SpendLine[] {
  const at = new Map(days.map((d, i) => [d, i]));
  const groups = new Map<string, Amount[]>();
  for (const r of rows) {
    const i = at.get(r.day);
    if (i === undefined) continue;
    const line = groups.get(key(r)) ?? days.map(() => '0');
    line[i] = add(line[i] ?? '0', r.cost);
    groups.set(key(r), line);
  }
  const lines = [...groups].map(([label, perDay]) => ({ label, perDay, total: perDay.reduce(add, '0') }));
  lines.sort((a, b) => new Big(b.total).cmp(a.total) || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  if (lines.length <= maxSeries) return lines;
  const rest = lines.slice(maxSeries - 1);
  const other = days.map((_, i) => rest.reduce((sum, l) => add(sum, l.perDay[i] ?? '0'), '0'));
  return [...lines.slice(0, maxSeries - 1), { label: 'Other', perDay: other, total: other.reduce(add, '0') }];
}
