/**
 * A carrier check's kept answer (issue 32: a cache hit adds under 0.1 ms to a send): the checker in process, its
 * answer for one number kept, asked again and again, beside the least any awaited check costs (an already
 * resolved promise), in the same run.
 */
import { CarrierChecker } from '../../src/domain/carrier-checks.js';

export interface CarrierCacheResults {
  readonly hits: number;
  /** Microseconds a kept answer took, median of the rounds. */
  readonly hitMicros: number;
  /** Microseconds an await of an answer already there took, median of the rounds: what no check costs. */
  readonly baselineMicros: number;
}

const rounds = 7;

async function microsPer(n: number, each: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) await each();
  return Number(process.hrtime.bigint() - start) / 1000 / n;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export async function benchCarrierCache(hits = 200_000): Promise<CarrierCacheResults> {
  const clock = { now: () => new Date() };
  const checker = new CarrierChecker(
    'sim_swap',
    { flagged: async () => false },
    { clock, policy: { cacheSeconds: 3600, timeoutMs: 1000, maxEntries: 50_000 }, wait: () => new Promise<void>(() => undefined) },
  );
  // 50,000 numbers kept, as a busy instance keeps them: the hit is one of them.
  for (let i = 0; i < 50_000; i += 1) await checker.outcome(`+2348030${String(i).padStart(6, '0')}`);
  const number = '+2348030012345';
  const hit: number[] = [];
  const baseline: number[] = [];
  for (let r = 0; r < rounds; r += 1) {
    hit.push(await microsPer(hits, () => checker.outcome(number)));
    baseline.push(await microsPer(hits, () => Promise.resolve('clear')));
  }
  return { hits, hitMicros: median(hit), baselineMicros: median(baseline) };
}
