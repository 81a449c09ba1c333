import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { dailyTrafficQuery, SqlStatsStore } from '../../src/store/stats-store.js';
import { createVerification } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

const dayMs = 86_400_000;

/** The statement behind GET /v1/stats, on both databases: what it counts as a day, and how it reads. */
forEachDatabase('traffic stats storage', (kind) => {
  let h: Harness;
  before(async () => {
    // The second test writes 40,000 rows in one statement, which on a machine busy with other files took longer
    // than the service's 5 s bound on a statement; the bound is not what these tests are about.
    h = await createHarness(kind, { env: { PREFIX_LIMIT_COUNT: '0', DATABASE_TIMEOUT_MS: '60000' } });
  });
  after(() => h.close());

  it("takes the UTC day of a verification, whatever the session's time zone", async () => {
    // 23:30 UTC is already the next day in Kiritimati (UTC+14).
    const start = Date.parse('2026-11-21T00:00:00Z');
    h.clock.advance(start + 23.5 * 3_600_000 - h.clock.now().getTime());
    const c = await h.client();
    const v = await createVerification(h, await h.token(undefined, c));
    const rows = await h.services.db.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL TIME ZONE 'Pacific/Kiritimati'`.execute(trx);
      const shown = await sql<{ local: string }>`SELECT to_char(created_at, 'YYYY-MM-DD') AS local FROM verifications WHERE id = ${v.id}`.execute(trx);
      assert.equal(shown.rows[0]?.local, '2026-11-22', 'the session reads the next day');
      return new SqlStatsStore(trx).dailyTraffic({ clientId: c.clientId, since: new Date(start), before: new Date(start + dayMs) });
    });
    assert.deepEqual(rows, [{ clientId: c.clientId, day: '2026-11-21', regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null }]);
  });

  it("reads one client's days through the (client_id, created_at) index", async () => {
    // 40 clients with 1000 verifications each, one every 5 hours back over 200 days: a week is a sliver of a client's.
    const clients = await Promise.all(Array.from({ length: 40 }, () => h.client()));
    const db = h.services.db.db;
    const now = h.clock.now();
    await sql`
      INSERT INTO verifications (id, client_id, type, status, otp, phone_number, country_code, paired_number,
                                 created_at, updated_at, expires_at, last_send_at, region_code)
      SELECT gen_random_uuid(), c.id, 'SMS', 'SUCCESS', '123456', '+234803' || lpad(g::text, 7, '0'), '+234', '',
             t, t, t + interval '10 minutes', t, 'NG'
      FROM clients c CROSS JOIN generate_series(1, 1000) g CROSS JOIN LATERAL (SELECT ${now}::timestamptz - g * interval '5 hours' AS t) at
      WHERE c.id IN (${sql.join(clients.map((c) => c.clientId))})`.execute(db);
    await sql`ANALYZE verifications`.execute(db);
    const [mine] = clients;
    assert.ok(mine);
    const query = dailyTrafficQuery(db, { clientId: mine.clientId, since: new Date(now.getTime() - 7 * dayMs), before: now }).compile();
    const plan = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${query.sql}`, [...query.parameters]));
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(text, /verifications_client_created/, text);
    // And it counts what it reads: the rows 5 to 165 hours old (7 UTC days), each sent once and verified.
    const rows = await new SqlStatsStore(db).dailyTraffic({ clientId: mine.clientId, since: new Date(now.getTime() - 7 * dayMs), before: now });
    const total = (field: 'sends' | 'verified') => rows.reduce((n, r) => n + r[field], 0);
    assert.deepEqual([total('sends'), total('verified'), rows.length], [33, 33, 7]);
  });
});
