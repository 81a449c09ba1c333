import type pg from 'pg';
import { sumRounds } from './drop-in-scenario.js';
import type { LoadResult } from './load.js';
import { PhoneSequence } from './phones.js';
import { benchCreate, type ScenarioSettings, type ServiceTarget } from './service-scenarios.js';

/** Creates with a table of routes against the same creates with none, on one service, alternating rounds. */
export interface RoutesResults {
  readonly without: LoadResult;
  readonly with: LoadResult;
  readonly routes: number;
  readonly rounds: number;
}

/**
 * Contract 17's target, measured: a create whose number has a route among `count` (the longest of several
 * matching prefixes, as a real table has: countries, prefixes of two operators, a default) at least 0.95x the
 * same create with no route set, which takes the channel's provider list. The routes are written as `routes set`
 * writes them and announced, so the service reads them as it would any change; each round's order alternates.
 */
export async function benchRoutes(
  target: ServiceTarget,
  db: pg.Pool,
  s: ScenarioSettings & { readonly rounds: number; readonly phoneOffset: number },
  /** Between rounds: the codes of the last one sent and the database checkpointed, so that no round pays for another. */
  between: () => Promise<void>,
  count = 200,
  provider = 'log',
): Promise<RoutesResults> {
  const phones = new PhoneSequence(s.phoneOffset);
  const create = async () => {
    const { result } = await benchCreate(target, phones, s);
    await between();
    return result;
  };
  const withouts: LoadResult[] = [];
  const withs: LoadResult[] = [];
  // A round unmeasured first: the service's first seconds of creates (its code still being compiled, its pools
  // filling) would fall on whichever side went first.
  await setRoutes(db, 0, provider);
  await create();
  for (let i = 0; i < s.rounds; i++) {
    for (const routed of i % 2 === 0 ? [false, true] : [true, false]) {
      await setRoutes(db, routed ? count : 0, provider);
      (routed ? withs : withouts).push(await create());
    }
  }
  await setRoutes(db, 0, provider);
  return { without: sumRounds(withouts), with: sumRounds(withs), routes: count, rounds: s.rounds };
}

/**
 * `count` SMS routes: `default`, the bench numbers' country (NG) and their prefixes +2348 and +23480 (the longest
 * wins), the rest prefixes of other numbers; or none. Waits until the service has read them (a create answers
 * from its table in memory, read again on the announcement).
 */
async function setRoutes(db: pg.Pool, count: number, provider: string): Promise<void> {
  await db.query('DELETE FROM routes');
  if (count > 0) {
    const destinations = ['default', 'NG', '+2348', '+23480'];
    for (let i = 0; destinations.length < count; i++) destinations.push(`+2347${String(i).padStart(3, '0')}`);
    await db.query(
      `INSERT INTO routes (channel, destination, providers, weights, failover_after_seconds, policy, updated_at)
       SELECT 'sms', d, ARRAY[$2::text], NULL, NULL, 'ordered', now() FROM unnest($1::text[]) d`,
      [destinations, provider],
    );
  }
  await db.query(`SELECT pg_notify('otp_routes', '')`);
  // Every instance follows a change within 2 s; one is plenty here.
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
