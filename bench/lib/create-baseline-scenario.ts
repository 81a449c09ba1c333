import type pg from 'pg';
import { baselineCheckout, freshDatabase } from './baseline.js';
import { sumRounds } from './drop-in-scenario.js';
import type { LoadResult } from './load.js';
import { PhoneSequence } from './phones.js';
import { processTicks, startService } from './provider-scenarios.js';
import { benchCreate, type ScenarioSettings, type ServiceTarget } from './service-scenarios.js';

/** Our create against the create of another git ref (BENCH_BASELINE_REF), each its own service, alternating rounds. */
export interface CreateBaselineResults {
  readonly ref: string;
  readonly ours: LoadResult;
  readonly baseline: LoadResult;
  readonly rounds: number;
  /**
   * Creates answered 200 per second of the service process's own CPU (user and system, from /proc), over the
   * measured rounds: what a create costs the service, less swayed than req/s by other work on the machine.
   */
  readonly oursPerCpuSecond: number | null;
  readonly baselinePerCpuSecond: number | null;
}

export interface CreateBaselineOptions extends ScenarioSettings {
  readonly ref: string;
  readonly rounds: number;
  /** The service's settings, as the create section's service has them. */
  readonly serviceEnv: () => NodeJS.ProcessEnv;
  /** The section's database server, where each side gets a fresh database of its own. */
  readonly admin: { query(text: string): Promise<unknown> };
  /** A pool on a side's database, to wait for its codes to be sent. */
  readonly pool: (url: string) => pg.Pool;
  /** Between rounds: that side's codes sent (its send queue empty) and the database checkpointed. */
  readonly between: (db: pg.Pool) => Promise<void>;
  readonly log: (text: string) => void;
}

/**
 * A change to the create path measured against the code before it, in the same run on the same machine: the two
 * services (ours and `ref`'s, from a detached worktree sharing this checkout's node_modules) run side by side, each
 * on a fresh database of its own on the same PostgreSQL, with the same settings; creates as the create section
 * makes them (signals on every one) go to one side at a time, in rounds whose order alternates, after one unmeasured
 * round each. Both services stay up through the whole run, so neither pays for the other's start.
 */
export async function benchCreateBaseline(o: CreateBaselineOptions): Promise<CreateBaselineResults> {
  const side = async (name: string, dir?: string) => {
    const url = await freshDatabase(o.admin, String(o.serviceEnv().DATABASE_URL), name);
    const service = await startService({ ...o.serviceEnv(), DATABASE_URL: url }, dir);
    const target: ServiceTarget = { url: service.url, clientId: '', clientSecret: '', token: service.token };
    return { target, db: o.pool(url), pid: service.child.pid, created: 0, ticks: 0 };
  };
  const ours = await side('otp_create_ours');
  const baseline = await side('otp_create_baseline', baselineCheckout(o.ref));
  const phones = new PhoneSequence(90_000_000);
  type Side = Awaited<ReturnType<typeof side>>;
  const round = async (s: Side, measured = true) => {
    const before = processTicks(s.pid);
    const { result } = await benchCreate(s.target, phones, o);
    const after = processTicks(s.pid);
    if (measured && before !== null && after !== null) {
      s.created += result.statuses['200'] ?? 0;
      s.ticks += after - before;
    }
    await o.between(s.db);
    return result;
  };
  // USER_HZ: /proc counts CPU time in hundredths of a second.
  const perCpuSecond = (s: Side) => (s.ticks > 0 ? s.created / (s.ticks / 100) : null);
  await round(ours, false);
  await round(baseline, false);
  const mine: LoadResult[] = [];
  const theirs: LoadResult[] = [];
  for (let i = 0; i < o.rounds; i++) {
    for (const which of i % 2 === 0 ? ['ours', 'baseline'] : ['baseline', 'ours']) {
      const result = await round(which === 'ours' ? ours : baseline);
      (which === 'ours' ? mine : theirs).push(result);
      o.log(`create-baseline: round ${i + 1} ${which} ${result.okRps.toFixed(0)} req/s`);
    }
  }
  return {
    ref: o.ref,
    ours: sumRounds(mine),
    baseline: sumRounds(theirs),
    rounds: o.rounds,
    oursPerCpuSecond: perCpuSecond(ours),
    baselinePerCpuSecond: perCpuSecond(baseline),
  };
}
