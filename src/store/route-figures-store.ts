import { sql, type Kysely } from 'kysely';
import type { Channel } from '../domain/channel-driver.js';
import { figuresKey, type ProviderFigures, type RouteFiguresStore } from '../domain/route-policy.js';
import type { Database } from './schema.js';

/**
 * Best routes' figures (contract 17) from the cost ledger, which names each send's route and provider: a send is
 * delivered when its provider's attempt on the record reads DELIVERED, and verified when it was its verification's
 * last send before the code was verified (the send that got the code there).
 */
export class SqlRouteFigures implements RouteFiguresStore {
  constructor(private readonly db: Kysely<Database>) {}

  async figures(routes: readonly { readonly channel: Channel; readonly destination: string }[], since: Date): Promise<ReadonlyMap<string, ProviderFigures>> {
    if (routes.length === 0) return new Map();
    const wanted = routes.map((r) => sql`(${r.channel}::text, ${r.destination}::text)`);
    const { rows } = await sql<{ channel: Channel; route: string; provider: string; sends: number; delivered: number; verified: number }>`
      SELECT c.channel, c.route, c.provider, count(*)::int AS sends,
        (count(*) FILTER (WHERE jsonb_path_exists(v.deliveries, '$[*] ? (@.provider == $p && @.status == "DELIVERED")', jsonb_build_object('p', c.provider))))::int AS delivered,
        (count(*) FILTER (WHERE v.status = 'SUCCESS'
          AND NOT EXISTS (SELECT 1 FROM send_costs l WHERE l.verification_id = c.verification_id AND l.sent_at > c.sent_at)))::int AS verified
      FROM send_costs c JOIN verifications v ON v.id = c.verification_id
      WHERE c.sent_at > ${since} AND (c.channel, c.route) IN (${sql.join(wanted)})
      GROUP BY 1, 2, 3`.execute(this.db);
    return new Map(rows.map((r) => [figuresKey(r.channel, r.route, r.provider), { sends: r.sends, delivered: r.delivered, verified: r.verified }]));
  }
}
