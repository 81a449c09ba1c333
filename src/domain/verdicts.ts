import type { FieldProblem } from './error-catalogue.js';
import { riskRules, type FactorEntry, type RiskRule } from './risk.js';
import { statsRange, type StatsQuery, type StatsRange } from './stats.js';

/** A create refused by an enforced rule (contract 18), kept to learn whether the number's user was real. */
export interface RiskRefusal {
  readonly clientId: string;
  readonly phoneNumber: string;
  readonly rule: RiskRule;
  readonly factor: string;
  readonly at: Date;
}

/** Per rule over a range: creates it refused, sends it shadowed, and how many of those had a code verified later. */
export interface Verdict {
  readonly rule: string;
  readonly factor: string;
  readonly refused: number;
  readonly shadowed: number;
  readonly verifiedLater: number;
}

export interface RiskStore {
  recordRefusals(refusals: readonly RiskRefusal[]): Promise<void>;
  verdicts(since: Date, before: Date, clientId: string | null): Promise<Verdict[]>;
}

/**
 * Every rule's verdict figures over the days asked (as GET /v1/stats reads them), in the rules' order, a rule with
 * none at zero; the problems of a malformed range.
 */
export async function verdictReport(
  store: Pick<RiskStore, 'verdicts'>,
  query: StatsQuery,
  clientId: string | null,
  now: Date,
): Promise<{ readonly range: StatsRange; readonly verdicts: Verdict[] } | { readonly problems: FieldProblem[] }> {
  const asked = statsRange(query, now);
  if ('problems' in asked) return asked;
  const found = await store.verdicts(asked.range.since, asked.range.before, clientId);
  const verdicts = (Object.keys(riskRules) as RiskRule[]).map((rule) => {
    const mine = found.filter((v) => v.rule === rule);
    const total = (key: 'refused' | 'shadowed' | 'verifiedLater') => mine.reduce((n, v) => n + v[key], 0);
    return { rule, factor: riskRules[rule], refused: total('refused'), shadowed: total('shadowed'), verifiedLater: total('verifiedLater') };
  });
  return { range: asked.range, verdicts };
}

/** At most this many refusals wait to be written; past it (a database far behind an attack) they are not kept. */
const maxQueued = 10_000;

/**
 * Writes refusals in batches behind the answers: a refused create is answered at once, and the refusals made
 * meanwhile go in one statement. They are figures, not requests: one lost with its process is not a loss.
 */
export class RefusalRecorder {
  private queued: RiskRefusal[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<RiskStore, 'recordRefusals'>,
    private readonly failed: (err: unknown) => void,
  ) {}

  /** The enforced factors of a create refused for `clientId` towards `phoneNumber`. */
  refused(clientId: string, phoneNumber: string, factors: readonly FactorEntry[], at: Date): void {
    const rows = factors.filter((f) => f.mode === 'enforce').map((f) => ({ clientId, phoneNumber, rule: f.rule, factor: f.factor, at }));
    if (rows.length === 0 || this.queued.length >= maxQueued) return;
    if (this.queued.length === 0) this.flushing = this.flushing.then(() => this.flush());
    this.queued.push(...rows);
  }

  /** Resolves once every refusal recorded so far is written (tests, shutdown). */
  idle(): Promise<void> {
    return this.flushing;
  }

  private async flush(): Promise<void> {
    const batch = this.queued;
    this.queued = [];
    await this.store.recordRefusals(batch).catch(this.failed);
  }
}
