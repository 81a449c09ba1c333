import { utcDay } from './daily-quota.js';
import type { FieldProblem } from './error-catalogue.js';
import { per, sum, type Amount } from './money.js';
import { regionOfCallingCode } from './phone.js';

/** A client's traffic towards one country on one UTC day (contract 10, GET /v1/stats). */
export interface DailyTraffic {
  /** The UTC day the verifications were created, YYYY-MM-DD. */
  readonly day: string;
  /** ISO 3166 alpha-2 region, 001 for non-geographic numbers; null for old rows whose calling code several regions share. */
  readonly regionCode: string | null;
  /** The calling code, +NNN. */
  readonly countryCode: string;
  /**
   * The channel that carried the verifications' latest send (`delivery.channel`: SMS, CALL, ...): a verification
   * counts, all its sends included, under the channel its workflow ended on (contract 13).
   */
  readonly channel: string;
  /** Messages and calls asked for: 1 per create, 1 per resend and 1 per workflow step. */
  readonly sends: number;
  /** Verifications whose latest send a receipt marked DELIVERED. */
  readonly delivered: number;
  /** Verifications that ended SUCCESS. */
  readonly verified: number;
  /** What their sends cost (contract 17), a decimal string in COST_CURRENCY; sends of unknown price add nothing. */
  readonly cost: Amount;
  /** cost / verified, to 6 decimals; null when none was verified. */
  readonly costPerVerified: Amount | null;
}

/** The same, of one client among all (the operator's `otp-service stats`). */
export interface ClientDailyTraffic extends DailyTraffic {
  readonly clientId: string;
  /**
   * Only when asked for by provider (`stats --by-provider`, the console): the provider that carried the latest
   * send (`delivery.provider`); null while none took it.
   */
  readonly provider?: string | null;
}

/** The UTC days asked for, both inclusive. */
export interface StatsRange {
  /** YYYY-MM-DD. */
  readonly from: string;
  /** YYYY-MM-DD. */
  readonly to: string;
  /** 00:00 UTC of `from`: the first instant counted. */
  readonly since: Date;
  /** 00:00 UTC of the day after `to`: the first instant not counted. */
  readonly before: Date;
}

/** What the caller gave: either day may be absent. */
export interface StatsQuery {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
}

/** The days shown when none are named: today and the 6 before it. */
export const defaultStatsDays = 7;
/** The most days one answer covers (a leap year). */
export const maxStatsDays = 366;

const dayMs = 86_400_000;
/**
 * The first day a range may start on. Year 0000 is a day of the proleptic calendar, but PGlite sends a Date of
 * it as "0000-01-01T..." (PostgreSQL writes that year 1 BC) and the database refuses it: the query would fail.
 */
export const firstDay = '0001-01-01';
const firstDayStart = Date.parse(`${firstDay}T00:00:00Z`);
const dayPattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The start (00:00 UTC) of a YYYY-MM-DD day, or null when it is not a day of the calendar (2026-02-30). */
export function parseDay(day: string): Date | null {
  const m = dayPattern.exec(day);
  if (!m) return null;
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  at.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return utcDay(at) === day ? at : null;
}

/**
 * The range a query asks for, read against `now`: `to` defaults to today (UTC) and `from` to 6 days before `to`.
 * A day that is not a calendar day or is before 0001-01-01, `from` after `to`, or more than 366 days are refused, each
 * problem named.
 */
export function statsRange(query: StatsQuery, now: Date): { readonly range: StatsRange } | { readonly problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const read = (field: 'from' | 'to', value: string | undefined): Date | null => {
    if (value === undefined) return null;
    const at = parseDay(value);
    if (!at) problems.push({ field, issue: 'must be a calendar day, YYYY-MM-DD' });
    else if (at.getTime() < firstDayStart) problems.push({ field, issue: `must be ${firstDay} or later` });
    return at;
  };
  const givenFrom = read('from', query.from);
  const givenTo = read('to', query.to);
  if (problems.length > 0) return { problems };
  const to = givenTo ?? new Date(Math.floor(now.getTime() / dayMs) * dayMs);
  // The default range is cut at the first day rather than refused: the caller named no day before it.
  const from = givenFrom ?? new Date(Math.max(firstDayStart, to.getTime() - (defaultStatsDays - 1) * dayMs));
  const days = Math.round((to.getTime() - from.getTime()) / dayMs) + 1;
  if (days < 1) return { problems: [{ field: 'from', issue: `must not be after to (${utcDay(to)})` }] };
  if (days > maxStatsDays) return { problems: [{ field: 'from', issue: `must be at most ${maxStatsDays} days before to, both included (${days} asked)` }] };
  return { range: { from: utcDay(from), to: utcDay(to), since: from, before: new Date(to.getTime() + dayMs) } };
}

/**
 * Rows as the store counted them (regionCode null for rows made before region_code existed) made into the answer.
 * Those old rows were grouped by calling code in SQL, since their region cannot be read there: each gets the region
 * its calling code alone names (+234: NG, +800: 001), exactly the region of every valid number under it; where
 * regions share a code (+1, +44) it stays null rather than reading each number. Rows that then name the same
 * day, client, region and calling code are added up; the answer is ordered by day, then region (null last), then
 * calling code (001 spans several).
 */
export function settleTraffic<T extends DailyTraffic>(rows: readonly T[], key: (row: T) => string = () => ''): T[] {
  const merged = new Map<string, T>();
  for (const row of rows) {
    const regionCode = row.regionCode ?? regionOfCallingCode(row.countryCode);
    const at = [key(row), row.day, regionCode ?? '', row.countryCode, row.channel].join('\u0000');
    const seen = merged.get(at);
    merged.set(
      at,
      seen
        ? { ...seen, sends: seen.sends + row.sends, delivered: seen.delivered + row.delivered, verified: seen.verified + row.verified, cost: sum([seen.cost, row.cost]) }
        : { ...row, regionCode },
    );
  }
  return [...merged.values()].map((row) => ({ ...row, costPerVerified: per(row.cost, row.verified) })).sort(
    (a, b) =>
      compare(a.day, b.day) ||
      compare(a.regionCode ?? '\uffff', b.regionCode ?? '\uffff') ||
      compare(a.countryCode, b.countryCode) ||
      compare(a.channel, b.channel) ||
      compare(key(a), key(b)),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
