import { sql, type Kysely } from 'kysely';
import { isRiskRule, isRuleMode, type RiskRule, type RuleMode, type RuleModeEntry } from '../domain/risk.js';
import type { Database } from './schema.js';

/** The channel rule mode changes are announced on (PostgreSQL), so that every instance reads the modes again. */
export const ruleModesChannel = 'otp_rule_modes';

/** The risk rules' modes (contract 18) in rule_modes (0040); each change is announced by the transaction making it. */
export class SqlRuleModeStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** PostgreSQL: NOTIFY other processes in the changing transaction. */
    private readonly announce: boolean,
  ) {}

  /**
   * Sets a rule's mode for every client (`clientId` null) or for one. `enforce` for every client is what no row
   * says, so it removes the row; a client's `enforce` is kept, as it overrides a service-wide shadow or off.
   */
  set(rule: RiskRule, clientId: string | null, mode: RuleMode, now: Date): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('rule_modes').where('rule', '=', rule).where(sql<boolean>`client_id IS NOT DISTINCT FROM ${clientId}::uuid`).execute();
      if (clientId !== null || mode !== 'enforce') await trx.insertInto('rule_modes').values({ rule, client_id: clientId, mode, updated_at: now }).execute();
      if (this.announce) await sql`SELECT pg_notify(${ruleModesChannel}, '')`.execute(trx);
    });
  }

  async all(): Promise<RuleModeEntry[]> {
    const rows = await this.db.selectFrom('rule_modes').select(['rule', 'client_id', 'mode']).orderBy('rule').orderBy('client_id').execute();
    // A rule or mode a newer version wrote and this one does not know is left out.
    return rows.flatMap((r) => (isRiskRule(r.rule) && isRuleMode(r.mode) ? [{ rule: r.rule, clientId: r.client_id, mode: r.mode }] : []));
  }
}
