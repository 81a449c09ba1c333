import { sql, type Kysely } from 'kysely';
import { periodStarts, type Budget, type BudgetPeriod, type BudgetRefusal, type PeriodSpend, type Spend } from '../domain/budgets.js';
import type { Amount } from '../domain/money.js';
import type { Database } from './schema.js';

/**
 * Budgets' spend (contract 17) in client_spend and budget_holds (0039). Every statement that moves a client's spend
 * takes its hold rows before its spend rows, and spend rows in key order, so that admissions, acceptances
 * (verification-store's writeSent), releases and the sweep never wait on each other in a circle.
 */
export class SpendStore implements Spend {
  /** The (client, day) whose spend rows this process knows exist: only a period's first admission makes them. */
  private readonly started = new Set<string>();
  /**
   * Whether any client has a budget, or any send holds one: while not, an acceptance leaves budgets out of its
   * statement (each table a statement names costs its planning, on the path of every code). Read at start, again
   * on every client change (announced to every instance) and every housekeeping round, and set by a hold.
   */
  kept = false;

  constructor(private readonly db: Kysely<Database>) {}

  async hold(clientId: string, verificationId: string, amount: Amount, budget: Budget, now: Date): Promise<BudgetRefusal | null> {
    const { day, month } = periodStarts(now);
    await this.startPeriods(clientId, day, month);
    // The hold's row is locked before the spend rows (the order every statement here keeps); the spend rows are
    // read under their locks, so that an admission on another instance waits, then sees this one's.
    const { rows } = await sql<{ period: BudgetPeriod; spent: string; limit: string }>`
      WITH mine AS (SELECT 1 FROM budget_holds WHERE verification_id = ${verificationId}::uuid FOR UPDATE),
      cur AS (
        SELECT period, spent FROM client_spend
        WHERE client_id = ${clientId}::uuid AND ((period = 'day' AND starts = ${day}::date) OR (period = 'month' AND starts = ${month}::date))
          AND (SELECT count(*) FROM mine) >= 0
        ORDER BY period FOR UPDATE
      ),
      over AS (
        SELECT period, spent, CASE period WHEN 'day' THEN ${budget.daily}::numeric ELSE ${budget.monthly}::numeric END AS "limit" FROM cur
        WHERE spent + ${amount}::numeric > CASE period WHEN 'day' THEN ${budget.daily}::numeric ELSE ${budget.monthly}::numeric END
        ORDER BY period LIMIT 1
      ),
      charged AS (
        UPDATE client_spend s SET spent = s.spent + ${amount}::numeric FROM cur
        WHERE NOT EXISTS (SELECT 1 FROM over) AND s.client_id = ${clientId}::uuid AND s.period = cur.period
          AND s.starts = CASE cur.period WHEN 'day' THEN ${day}::date ELSE ${month}::date END
      ),
      held AS (
        INSERT INTO budget_holds AS h (verification_id, client_id, amount, sends, day, created_at)
        SELECT ${verificationId}::uuid, ${clientId}::uuid, ${amount}::numeric, 1, ${day}::date, ${now}::timestamptz WHERE NOT EXISTS (SELECT 1 FROM over)
        ON CONFLICT (verification_id) DO UPDATE SET amount = h.amount + excluded.amount, sends = h.sends + 1, day = excluded.day
      )
      SELECT period, trim_scale(spent)::text AS spent, "limit"::text FROM over`.execute(this.db);
    const over = rows[0];
    if (!over) this.kept = true;
    return over ? { period: over.period, limit: over.limit, spent: over.spent } : null;
  }

  async release(verificationId: string, amount: Amount): Promise<void> {
    await sql`
      WITH mine AS (SELECT verification_id, client_id, sends, day FROM budget_holds WHERE verification_id = ${verificationId}::uuid FOR UPDATE),
      fewer AS (UPDATE budget_holds h SET amount = h.amount - ${amount}::numeric, sends = h.sends - 1 FROM mine WHERE h.verification_id = mine.verification_id AND mine.sends > 1),
      gone AS (DELETE FROM budget_holds h USING mine WHERE h.verification_id = mine.verification_id AND mine.sends <= 1)
      ${this.refunded(sql`SELECT client_id, day, ${amount}::numeric AS amount FROM mine`)}`.execute(this.db);
  }

  /**
   * Gives back the holds of verifications that ended (or never committed) without a provider taking their send,
   * made before `before`, at most `limit`; how many.
   */
  async releaseEnded(before: Date, limit: number): Promise<number> {
    const { rows } = await sql<{ released: number }>`
      WITH ended AS (
        SELECT h.verification_id FROM budget_holds h
        WHERE h.created_at < ${before}::timestamptz
          AND NOT EXISTS (SELECT 1 FROM verifications v WHERE v.id = h.verification_id AND v.status = 'PENDING')
        ORDER BY h.verification_id LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ),
      gone AS (DELETE FROM budget_holds h USING ended WHERE h.verification_id = ended.verification_id RETURNING h.client_id, h.day, h.amount)
      ${this.refunded(sql`SELECT client_id, day, amount FROM gone`)}`.execute(this.db);
    return Number(rows[0]?.released ?? 0);
  }

  async refreshKept(): Promise<void> {
    const { rows } = await sql<{ kept: boolean }>`
      SELECT EXISTS (SELECT 1 FROM clients WHERE settings->'budget'->>'daily' IS NOT NULL OR settings->'budget'->>'monthly' IS NOT NULL)
        OR EXISTS (SELECT 1 FROM budget_holds) AS kept`.execute(this.db);
    this.kept = rows[0]?.kept === true;
  }

  async spendOf(clientId: string, budget: Budget, now: Date): Promise<PeriodSpend[]> {
    const { day, month } = periodStarts(now);
    const rows = await this.db
      .selectFrom('client_spend')
      .select(['period', sql<string>`trim_scale(spent)::text`.as('spent')])
      .where('client_id', '=', clientId)
      .where((eb) => eb.or([eb.and([eb('period', '=', 'day'), eb('starts', '=', day)]), eb.and([eb('period', '=', 'month'), eb('starts', '=', month)])]))
      .execute();
    const spent = new Map(rows.map((r) => [r.period, r.spent]));
    return [
      { period: 'day', starts: day, limit: budget.daily, spent: spent.get('day') ?? '0' },
      { period: 'month', starts: month, limit: budget.monthly, spent: spent.get('month') ?? '0' },
    ];
  }

  /**
   * The spend rows of a client's day and month, made at the period's first admission: from the ledger's known
   * costs of the period so far, so that a budget set mid-month counts what was spent before it.
   */
  private async startPeriods(clientId: string, day: string, month: string): Promise<void> {
    const key = `${clientId}|${day}`;
    if (this.started.has(key)) return;
    await sql`
      INSERT INTO client_spend (client_id, period, starts, spent)
      SELECT ${clientId}::uuid, p.period, p.starts,
        coalesce((SELECT sum(c.cost) FROM send_costs c WHERE c.client_id = ${clientId}::uuid AND c.sent_at >= p.starts::timestamp AT TIME ZONE 'UTC'), 0)
      FROM (VALUES ('day', ${day}::date), ('month', ${month}::date)) p (period, starts)
      ON CONFLICT DO NOTHING`.execute(this.db);
    // Days before today are of no use: keep the set to today's.
    for (const k of this.started) if (!k.endsWith(day)) this.started.delete(k);
    this.started.add(key);
  }

  /** Takes `returned`'s amounts (client_id, day, amount) off the spend of each one's day and month. */
  private refunded(returned: ReturnType<typeof sql>) {
    return sql`,
      back AS (${returned}),
      moves AS (
        SELECT b.client_id, x.period, x.starts, sum(b.amount) AS amount
        FROM back b CROSS JOIN LATERAL (VALUES ('day', b.day), ('month', date_trunc('month', b.day)::date)) x (period, starts)
        GROUP BY 1, 2, 3
      ),
      locked AS (
        SELECT s.client_id, s.period, s.starts FROM client_spend s JOIN moves m USING (client_id, period, starts)
        ORDER BY 1, 2, 3 FOR UPDATE OF s
      ),
      refunded AS (
        UPDATE client_spend s SET spent = s.spent - m.amount FROM moves m
        WHERE s.client_id = m.client_id AND s.period = m.period AND s.starts = m.starts AND (SELECT count(*) FROM locked) >= 0
      )
      SELECT count(*)::int AS released FROM back`;
  }
}
