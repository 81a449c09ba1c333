import type { FieldProblem } from './error-catalogue.js';
import type { Clock } from './ports.js';
import { settleTraffic, statsRange, type ClientDailyTraffic, type DailyTraffic, type StatsQuery, type StatsRange } from './stats.js';
import type { StatsStore } from './stats-store.js';
import { verdictReport, type RiskStore, type Verdict } from './verdicts.js';

export interface StatsServiceDeps {
  readonly store: StatsStore;
  /** Refusals and shadowed sends per risk rule (contract 18). */
  readonly verdicts: Pick<RiskStore, 'verdicts'>;
  readonly clock: Clock;
}

/** What a stats query found, or why its days were refused. */
export type StatsOutcome<T> =
  | { readonly kind: 'ok'; readonly range: StatsRange; readonly rows: T[] }
  | { readonly kind: 'invalid'; readonly problems: FieldProblem[] };

/** Traffic figures per day and country (contract 10): a client's own (GET /v1/stats), or every client's (the CLI). */
export class StatsService {
  constructor(private readonly deps: StatsServiceDeps) {}

  /** The client's own figures over the days asked for (the last 7 by default). */
  async forClient(clientId: string, query: StatsQuery): Promise<StatsOutcome<DailyTraffic>> {
    const outcome = await this.read(clientId, query);
    if (outcome.kind === 'invalid') return outcome;
    return { ...outcome, rows: outcome.rows.map(({ clientId: _own, ...row }) => row) };
  }

  /** Per risk rule: creates refused, sends shadowed, and how many of those numbers verified later; of one client or all (null). */
  async factors(clientId: string | null, query: StatsQuery): Promise<StatsOutcome<Verdict>> {
    const report = await verdictReport(this.deps.verdicts, query, clientId, this.deps.clock.now());
    return 'problems' in report ? { kind: 'invalid', problems: report.problems } : { kind: 'ok', range: report.range, rows: report.verdicts };
  }

  /** Every client's figures, each row naming its client; byProvider: also per provider of the latest send. */
  forAllClients(query: StatsQuery, byProvider = false): Promise<StatsOutcome<ClientDailyTraffic>> {
    return this.read(null, query, byProvider);
  }

  private async read(clientId: string | null, query: StatsQuery, byProvider = false): Promise<StatsOutcome<ClientDailyTraffic>> {
    const asked = statsRange(query, this.deps.clock.now());
    if ('problems' in asked) return { kind: 'invalid', problems: asked.problems };
    const { range } = asked;
    const rows = await this.deps.store.dailyTraffic({ clientId, since: range.since, before: range.before, byProvider });
    return { kind: 'ok', range, rows: settleTraffic(rows, (row) => (byProvider ? `${row.clientId}\u0000${row.provider ?? ''}` : row.clientId)) };
  }
}
