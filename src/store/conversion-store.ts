import { sql, type Kysely, type Selectable } from 'kysely';
import type { ClientThrottle, ClientTraffic, ResendThrottle, ResendTraffic, RouteTraffic, Throttle } from '../domain/conversion.js';
import type { ConversionStore } from '../domain/conversion-watch.js';
import type { ClientThrottlesTable, CountryThrottlesTable, Database, ResendThrottlesTable } from './schema.js';

export class SqlConversionStore implements ConversionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async traffic(since: Date, recent: { readonly since: Date; readonly until: Date } | null = null): Promise<RouteTraffic[]> {
    // Resends count wherever sends count (contract 14): each send a provider took is one, so a pumped number sent
    // its code three times weighs three. Through the (client_id, created_at) index, client by client, the last hour only. Rows made before migration
    // 0010 have no region and are long past the hour.
    // The short window (CONVERSION_SHORT_WINDOW_SECONDS) is a part of the hour: the same rows, filtered.
    const inRecent = recent ? sql`v.created_at > ${recent.since} AND v.created_at <= ${recent.until}` : sql`false`;
    const { rows } = await sql<{
      region_code: string;
      country_code: string;
      network: string;
      provider: string;
      sends: number;
      delivered: number;
      verified: number;
      recent_sends: number;
      recent_verified: number;
    }>`
      SELECT v.region_code, v.country_code, coalesce(v.network, '') AS network, v.delivery_provider AS provider, sum(greatest(v.delivery_sends, 1))::int AS sends,
          (count(*) FILTER (WHERE v.delivery_status = 'DELIVERED'))::int AS delivered,
          (count(*) FILTER (WHERE v.status = 'SUCCESS' OR (v.relayed AND v.delivery_status = 'DELIVERED')))::int AS verified,
          coalesce(sum(greatest(v.delivery_sends, 1)) FILTER (WHERE ${inRecent}), 0)::int AS recent_sends,
          (count(*) FILTER (WHERE (${inRecent}) AND (v.status = 'SUCCESS' OR (v.relayed AND v.delivery_status = 'DELIVERED'))))::int AS recent_verified
        FROM verifications v
          LEFT JOIN country_throttles t
            ON t.region_code = v.region_code AND t.country_code = v.country_code AND t.network = coalesce(v.network, '')
              AND t.provider = v.delivery_provider
        WHERE v.client_id = ANY(ARRAY(SELECT id FROM clients)) AND v.created_at > ${since} AND NOT v.test_number
          AND v.region_code IS NOT NULL AND v.delivery_provider IS NOT NULL
          AND (t.throttled_until IS NULL OR v.created_at > t.throttled_until)
        GROUP BY v.region_code, v.country_code, coalesce(v.network, ''), v.delivery_provider`.execute(this.db);
    return rows.map((r) => ({
      regionCode: r.region_code,
      countryCode: r.country_code,
      network: r.network,
      provider: r.provider,
      sends: Number(r.sends),
      delivered: Number(r.delivered),
      verified: Number(r.verified),
      ...(recent && { recent: { sends: Number(r.recent_sends), verified: Number(r.recent_verified) } }),
    }));
  }

  async throttle(routes: readonly RouteTraffic[], at: Date, until: Date): Promise<Throttle[]> {
    // Every instance may find the same route under at once: the first write wins, the others change nothing.
    const rows = await this.db
      .insertInto('country_throttles')
      .values(
        routes.map((r) => ({
          region_code: r.regionCode,
          country_code: r.countryCode,
          network: r.network,
          provider: r.provider,
          throttled_at: at,
          throttled_until: until,
          sends: r.sends,
          verified: r.verified,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['region_code', 'country_code', 'provider', 'network'])
          .doUpdateSet({
            throttled_at: sql`excluded.throttled_at`,
            throttled_until: sql`excluded.throttled_until`,
            sends: sql`excluded.sends`,
            verified: sql`excluded.verified`,
          })
          .where('country_throttles.throttled_until', '<=', at),
      )
      .returningAll()
      .execute();
    return rows.map(toThrottle);
  }

  async clientTraffic(since: Date, settledBefore: Date): Promise<ClientTraffic[]> {
    const { rows } = await sql<{ client_id: string; sends: number; verified: number }>`
      SELECT v.client_id, sum(greatest(v.delivery_sends, 1))::int AS sends,
          -- A relayed code is its auth server's to check: delivered is as far as it goes here (as per country).
          (count(*) FILTER (WHERE v.status = 'SUCCESS' OR (v.relayed AND v.delivery_status = 'DELIVERED')))::int AS verified
        FROM verifications v
          LEFT JOIN client_throttles t ON t.client_id = v.client_id
        WHERE v.client_id = ANY(ARRAY(SELECT id FROM clients)) AND v.created_at > ${since} AND v.created_at <= ${settledBefore}
          AND NOT v.test_number AND v.delivery_provider IS NOT NULL
          AND (t.throttled_until IS NULL OR v.created_at > t.throttled_until)
        GROUP BY v.client_id`.execute(this.db);
    return rows.map((r) => ({ clientId: r.client_id, sends: Number(r.sends), verified: Number(r.verified) }));
  }

  async throttleClients(clients: readonly ClientTraffic[], at: Date, until: Date): Promise<ClientThrottle[]> {
    const rows = await this.db
      .insertInto('client_throttles')
      .values(clients.map((c) => ({ client_id: c.clientId, throttled_at: at, throttled_until: until, sends: c.sends, verified: c.verified })))
      .onConflict((oc) =>
        oc
          .column('client_id')
          .doUpdateSet({ throttled_at: sql`excluded.throttled_at`, throttled_until: sql`excluded.throttled_until`, sends: sql`excluded.sends`, verified: sql`excluded.verified` })
          .where('client_throttles.throttled_until', '<=', at),
      )
      .returningAll()
      .execute();
    return rows.map(toClientThrottle);
  }

  async resendTraffic(since: Date, until: Date, createdSince: Date): Promise<ResendTraffic[]> {
    // Client by client through the (client_id, created_at) index: a code resent within the window was created at
    // most its lifetime before. Each resend of a code weighs one; the code, verified or not, once.
    const { rows } = await sql<{ client_id: string; resends: number; verified: number }>`
      SELECT v.client_id, sum(v.send_requests - 1)::int AS resends, (count(*) FILTER (WHERE v.status = 'SUCCESS'))::int AS verified
        FROM verifications v
          LEFT JOIN resend_throttles t ON t.client_id = v.client_id
        WHERE v.client_id = ANY(ARRAY(SELECT id FROM clients)) AND v.created_at > ${createdSince}
          AND v.send_requests > 1 AND v.last_send_at > ${since} AND v.last_send_at <= ${until} AND NOT v.test_number
          AND (t.throttled_until IS NULL OR v.last_send_at > t.throttled_until)
        GROUP BY v.client_id`.execute(this.db);
    return rows.map((r) => ({ clientId: r.client_id, resends: Number(r.resends), verified: Number(r.verified) }));
  }

  async throttleResends(clients: readonly ResendTraffic[], at: Date, until: Date): Promise<ResendThrottle[]> {
    // Every instance may find the same client under at once: the first write wins, the others change nothing.
    const rows = await this.db
      .insertInto('resend_throttles')
      .values(clients.map((c) => ({ client_id: c.clientId, throttled_at: at, throttled_until: until, resends: c.resends, verified: c.verified })))
      .onConflict((oc) =>
        oc
          .column('client_id')
          .doUpdateSet({ throttled_at: sql`excluded.throttled_at`, throttled_until: sql`excluded.throttled_until`, resends: sql`excluded.resends`, verified: sql`excluded.verified` })
          .where('resend_throttles.throttled_until', '<=', at),
      )
      .returningAll()
      .execute();
    return rows.map(toResendThrottle);
  }

  async activeResends(now: Date): Promise<ResendThrottle[]> {
    const rows = await this.db.selectFrom('resend_throttles').selectAll().where('throttled_until', '>', now).execute();
    return rows.map(toResendThrottle);
  }

  async verifiedCountries(since: Date, keptSince: Date): Promise<{ clientId: string; regionCode: string }[]> {
    // The last hour's creates, client by client through the (client_id, created_at) index, as traffic() reads them.
    await sql`
      INSERT INTO client_countries (client_id, region_code, verified_at)
        SELECT v.client_id, v.region_code, max(v.created_at) FROM verifications v
          WHERE v.client_id = ANY(ARRAY(SELECT id FROM clients)) AND v.created_at > ${since} AND v.status = 'SUCCESS'
            AND v.region_code IS NOT NULL AND NOT v.test_number
          GROUP BY v.client_id, v.region_code
      ON CONFLICT (client_id, region_code) DO UPDATE SET verified_at = greatest(client_countries.verified_at, excluded.verified_at)`.execute(this.db);
    const rows = await this.db.selectFrom('client_countries').select(['client_id', 'region_code']).where('verified_at', '>', keptSince).execute();
    return rows.map((r) => ({ clientId: r.client_id, regionCode: r.region_code }));
  }

  async activeClients(now: Date): Promise<ClientThrottle[]> {
    const rows = await this.db.selectFrom('client_throttles').selectAll().where('throttled_until', '>', now).execute();
    return rows.map(toClientThrottle);
  }

  /** Ends a client's throttles now, its resends' too (`blocks lift CLIENT_ID`); false when none was in force. */
  async liftClient(clientId: string, now: Date): Promise<boolean> {
    const result = await this.db
      .updateTable('client_throttles')
      .set({ throttled_until: now })
      .where('client_id', '=', clientId)
      .where('throttled_until', '>', now)
      .executeTakeFirst();
    const resends = await this.db
      .updateTable('resend_throttles')
      .set({ throttled_until: now })
      .where('client_id', '=', clientId)
      .where('throttled_until', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) + Number(resends.numUpdatedRows) > 0;
  }

  async active(now: Date): Promise<Throttle[]> {
    const rows = await this.db.selectFrom('country_throttles').selectAll().where('throttled_until', '>', now).orderBy('throttled_at', 'desc').execute();
    return rows.map(toThrottle);
  }

  /** Ends the throttles of a country (every provider) now; how many were in force. */
  async lift(regionCode: string, now: Date): Promise<number> {
    const result = await this.db
      .updateTable('country_throttles')
      .set({ throttled_until: now })
      .where('region_code', '=', regionCode)
      .where('throttled_until', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}

function toClientThrottle(r: Selectable<ClientThrottlesTable>): ClientThrottle {
  return {
    clientId: r.client_id,
    throttledAt: new Date(r.throttled_at),
    throttledUntil: new Date(r.throttled_until),
    sends: r.sends,
    verified: r.verified,
  };
}

function toThrottle(r: Selectable<CountryThrottlesTable>): Throttle {
  return {
    regionCode: r.region_code,
    countryCode: r.country_code,
    network: r.network,
    provider: r.provider,
    throttledAt: new Date(r.throttled_at),
    throttledUntil: new Date(r.throttled_until),
    sends: r.sends,
    verified: r.verified,
  };
}

function toResendThrottle(r: Selectable<ResendThrottlesTable>): ResendThrottle {
  return {
    clientId: r.client_id,
    throttledAt: new Date(r.throttled_at),
    throttledUntil: new Date(r.throttled_until),
    resends: r.resends,
    verified: r.verified,
  };
}
