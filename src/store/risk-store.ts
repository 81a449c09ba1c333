import { sql, type Kysely } from 'kysely';
import type { RiskRefusal, RiskStore, Verdict } from '../domain/verdicts.js';
import type { Database } from './schema.js';

type Count = string | number | bigint;

/** Refusals (risk_refusals) and shadowed sends (verifications.risk) in PostgreSQL or PGlite (0040). */
export class SqlRiskStore implements RiskStore {
  constructor(private readonly db: Kysely<Database>) {}

  async recordRefusals(refusals: readonly RiskRefusal[]): Promise<void> {
    if (refusals.length === 0) return;
    await this.db
      .insertInto('risk_refusals')
      .values(refusals.map((r) => ({ client_id: r.clientId, phone_number: r.phoneNumber, rule: r.rule, factor: r.factor, refused_at: r.at })))
      .execute();
  }

  /**
   * Per rule: the creates it refused and the sends it shadowed in the range, and of those how many numbers had a
   * code verified: a shadowed send's own code, or for a refusal a later create of the same number and client.
   */
  async verdicts(since: Date, before: Date, clientId: string | null): Promise<Verdict[]> {
    const { rows } = await sql<{ rule: string; factor: string; refused: Count; shadowed: Count; verified: Count }>`
      SELECT rule, factor, sum(refused) AS refused, sum(shadowed) AS shadowed, sum(verified) AS verified FROM (
        SELECT r.rule, r.factor, count(*) AS refused, 0 AS shadowed,
          count(*) FILTER (WHERE EXISTS (
            SELECT 1 FROM verifications v
            WHERE v.client_id = r.client_id AND v.phone_number = r.phone_number AND v.created_at >= r.refused_at AND v.status = 'SUCCESS'
          )) AS verified
        FROM risk_refusals r
        WHERE r.refused_at >= ${since} AND r.refused_at < ${before} AND (${clientId}::uuid IS NULL OR r.client_id = ${clientId}::uuid)
        GROUP BY 1, 2
        UNION ALL
        SELECT f->>'rule', f->>'factor', 0, count(*), count(*) FILTER (WHERE v.status = 'SUCCESS')
        FROM verifications v CROSS JOIN LATERAL jsonb_array_elements(v.risk->'factors') f
        WHERE v.risk IS NOT NULL AND v.created_at >= ${since} AND v.created_at < ${before} AND f->>'mode' = 'shadow'
          AND (${clientId}::uuid IS NULL OR v.client_id = ${clientId}::uuid)
        GROUP BY 1, 2
      ) u
      GROUP BY rule, factor`.execute(this.db);
    return rows.map((r) => ({ rule: r.rule, factor: r.factor, refused: Number(r.refused), shadowed: Number(r.shadowed), verifiedLater: Number(r.verified) }));
  }
}
