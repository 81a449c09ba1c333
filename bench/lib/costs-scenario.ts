import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { costGroupings, type CostGrouping } from '../../src/domain/cost-report.js';
import { statsRange } from '../../src/domain/stats.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { costGroupsQuery, SqlCostStore } from '../../src/store/cost-store.js';

export interface CostsSettings {
  /** Rows of the send_costs ledger seeded (the issue: a million attempts). */
  readonly sends: number;
  /** Verifications they belong to; `sends - verifications` of them have a second send (at most one each). */
  readonly verifications: number;
  /** The days the sends are spread over, ending now; also the widest range measured. */
  readonly days: number;
  /** Measured runs per grouping and range, after one unmeasured. */
  readonly runs: number;
}

/** One grouping over one range: every measured run, its median and its slowest. */
export interface CostsTiming {
  readonly by: CostGrouping;
  readonly days: number;
  /** Groups answered and the sends they add up to (the range's share of the ledger). */
  readonly groups: number;
  readonly sends: number;
  readonly runsMs: number[];
  readonly medianMs: number;
  readonly maxMs: number;
}

export interface CostsResults {
  readonly settings: CostsSettings;
  /** What the seed wrote, counted back from the tables. */
  seeded: { sends: number; unknownCost: number; verifications: number; successful: number; withTwoSends: number; seconds: number } | null;
  readonly timings: CostsTiming[];
  /** EXPLAIN (ANALYZE, BUFFERS) of the slowest grouping over the widest range, one run. */
  slowestPlan: { by: CostGrouping; days: number; plan: string } | null;
}

export function emptyCostsResults(settings: CostsSettings): CostsResults {
  return { settings, seeded: null, timings: [], slowestPlan: null };
}

/** The answer the issue asks of `otp-service costs` over a million attempts. */
export const costsBoundMs = 1000;

const dayMs = 86_400_000;

/**
 * 20 countries (ISO 3166, calling code, an SMS price in USD), the most traffic first. The three first have routes of
 * their own, the next three routes for their calling code; the rest go by the default route.
 */
const countries: readonly (readonly [string, string, number])[] = [
  ['NG', '+234', 0.0031], ['GH', '+233', 0.0275], ['KE', '+254', 0.0105], ['ZA', '+27', 0.0182], ['EG', '+20', 0.0712],
  ['IN', '+91', 0.0021], ['US', '+1', 0.0079], ['GB', '+44', 0.0363], ['TZ', '+255', 0.0251], ['UG', '+256', 0.0274],
  ['CI', '+225', 0.0486], ['SN', '+221', 0.0567], ['CM', '+237', 0.0501], ['BR', '+55', 0.0133], ['DE', '+49', 0.0853],
  ['FR', '+33', 0.0693], ['MX', '+52', 0.0189], ['ID', '+62', 0.0413], ['PH', '+63', 0.0176], ['PK', '+92', 0.0249],
];
const providers = ['twilio', 'vonage', 'infobip', 'smpp'];
const clientCount = 50;

/**
 * The ledger of `sends` sends of `verifications` verifications over the `days` UTC days ending at `now`, written
 * with set-based statements (one INSERT ... SELECT generate_series for the verifications, one for their sends), in
 * the order the service writes them (by time, so ids, like its version 7 ones, follow time), then vacuumed and
 * analysed as autovacuum would have left them.
 *
 * Each verification: a client among 50 (some far busier than others), a country among 20 (likewise), SMS mostly,
 * some WhatsApp and calls, 60 % SUCCESS; a share of them (as many as make up `sends`) sent twice, the second time
 * 20 to 120 s later through the next provider (a failover). Each send is priced by its provider and country, except
 * about 5 % whose price is unknown (cost NULL).
 */
export async function seedCostLedger(handle: Db, settings: CostsSettings, now: Date): Promise<NonNullable<CostsResults['seeded']>> {
  const { sends, verifications } = settings;
  if (sends < verifications || sends > 2 * verifications) throw new Error('costs: sends must be between verifications and twice as many');
  const t0 = performance.now();
  const start = new Date(Math.floor(now.getTime() / dayMs) * dayMs - (settings.days - 1) * dayMs);
  // Sends up to 2 minutes after their verification's creation, all before now.
  const spanSeconds = (now.getTime() - start.getTime()) / 1000 - 180;
  const country = sql.raw(
    `(VALUES ${countries.map(([region, code, price], n) => `(${n}, '${region}', '${code}', ${price})`).join(', ')}) AS country(n, region, code, price)`,
  );
  const twice = sends - verifications;
  const db = handle.db;
  await sql`SELECT setseed(0.31)`.execute(db);
  // random()^2 makes the first countries and clients the busiest, as real traffic is.
  await sql`
    INSERT INTO verifications (id, client_id, type, status, otp, phone_number, country_code, paired_number, region_code,
      counter, created_at, updated_at, expires_at, last_send_at, send_requests, delivery_channel, delivery_provider,
      delivery_status, delivery_sends, delivery_updated_at, deliveries)
    SELECT (lpad(to_hex((extract(epoch FROM r.at) * 1000)::bigint), 12, '0') || '7' || substr(r.h, 1, 3) || '8' || substr(r.h, 4, 15))::uuid,
      md5('client' || r.client)::uuid, CASE r.channel WHEN 'CALL' THEN 'DROPPED_CALL' ELSE r.channel END, r.status, '123456', country.code || lpad((r.i % 100000000)::text, 9, '0'),
      country.code, '09010000000', country.region, CASE WHEN r.status = 'SUCCESS' THEN 1 ELSE 0 END,
      r.at, r.at + interval '40 seconds', r.at + interval '10 minutes', r.at, r.sends, r.channel, r.provider,
      'DELIVERED', r.sends, r.at + interval '5 seconds',
      jsonb_build_array(jsonb_build_object('channel', r.channel, 'provider', r.provider, 'status', 'DELIVERED', 'at', r.at, 'attempts', 1))
    FROM (
      SELECT i, md5('costs' || i) AS h, ${start}::timestamptz + make_interval(secs => (i + random()) * ${spanSeconds}::float8 / ${verifications}::int) AS at,
        floor(${clientCount}::int * random() ^ 2)::int AS client, floor(${countries.length}::int * random() ^ 2)::int AS country,
        CASE WHEN random() < 0.6 THEN 'SUCCESS' ELSE (ARRAY['EXPIRED', 'FAILED', 'EXPIRED', 'PENDING'])[1 + floor(random() * 4)::int] END AS status,
        1 + ((i + 1)::bigint * ${twice}::int / ${verifications}::int - i::bigint * ${twice}::int / ${verifications}::int)::int AS sends,
        (ARRAY['SMS', 'SMS', 'SMS', 'SMS', 'SMS', 'SMS', 'SMS', 'SMS', 'WHATSAPP', 'CALL'])[1 + floor(random() * 10)::int] AS channel,
        (${providers}::text[])[1 + floor(random() * ${providers.length}::int)::int] AS provider
      FROM generate_series(0, ${verifications}::int - 1) AS i
    ) r(i, h, at, client, country_n, status, sends, channel, provider)
    JOIN ${country} ON country.n = r.country_n
    ORDER BY r.i`.execute(db);
  await sql`
    INSERT INTO send_costs (verification_id, client_id, sent_at, channel, provider, region_code, route, cost)
    SELECT s.id, s.client_id, s.sent_at, s.channel, s.provider, s.region_code, s.route,
      CASE WHEN random() < 0.05 THEN NULL ELSE round((country.price * (1 + 0.15 * array_position(${providers}::text[], s.provider)))::numeric, 4) END
    FROM (
      SELECT v.id, v.client_id, v.region_code,
        v.created_at + make_interval(secs => CASE WHEN n = 1 THEN 1 ELSE 20 + (get_byte(uuid_send(v.id), 15) % 100) END) AS sent_at,
        lower(v.delivery_channel) AS channel,
        -- The last send went through the verification's provider, an earlier one through the provider before it.
        (${providers}::text[])[1 + (array_position(${providers}::text[], v.delivery_provider) - 1 + ${providers.length}::int - (v.delivery_sends - n)) % ${providers.length}::int] AS provider,
        CASE WHEN v.region_code IN ('NG', 'GH', 'KE') THEN v.region_code WHEN v.region_code IN ('ZA', 'EG', 'IN') THEN v.country_code ELSE 'default' END AS route
      FROM verifications v CROSS JOIN LATERAL generate_series(1, v.delivery_sends) AS n
    ) s
    JOIN ${country} ON country.region = s.region_code
    ORDER BY s.sent_at`.execute(db);
  await sql`VACUUM ANALYZE verifications`.execute(db);
  await sql`VACUUM ANALYZE send_costs`.execute(db);
  const { rows } = await sql<{ sends: number; unknown_cost: number; verifications: number; successful: number; with_two_sends: number }>`
    SELECT (SELECT count(*) FROM send_costs)::int AS sends, (SELECT count(*) FROM send_costs WHERE cost IS NULL)::int AS unknown_cost,
      (SELECT count(*) FROM verifications)::int AS verifications, (SELECT count(*) FROM verifications WHERE status = 'SUCCESS')::int AS successful,
      (SELECT count(*) FROM verifications WHERE delivery_sends = 2)::int AS with_two_sends`.execute(db);
  const r = rows[0];
  if (!r) throw new Error('costs: no counts');
  return { sends: r.sends, unknownCost: r.unknown_cost, verifications: r.verifications, successful: r.successful, withTwoSends: r.with_two_sends, seconds: (performance.now() - t0) / 1000 };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

/**
 * The costs section: a database of its own (`databaseUrl`, empty), migrated as the service migrates it, the ledger
 * seeded (seedCostLedger), then SqlCostStore.groups, the query behind `otp-service costs --by`, for every grouping
 * over the whole `days` (the worst case) and over the last 7 days as `costs --from` reads them: one unmeasured
 * run, then `runs` measured. The slowest grouping over the whole range is EXPLAINed once.
 */
export async function benchCosts(options: {
  readonly databaseUrl: string;
  readonly settings: CostsSettings;
  readonly log: (text: string) => void;
  readonly out: CostsResults;
}): Promise<void> {
  const { settings, log, out } = options;
  // The service's DATABASE_TIMEOUT_MS is 5 s by default; here a slow answer is measured rather than cut short.
  const handle = await openDatabase({ databaseUrl: options.databaseUrl, dataDir: '', poolSize: 2, timeoutMs: 600_000 });
  try {
    const now = new Date();
    log(`costs: seeding ${settings.sends} sends of ${settings.verifications} verifications over ${settings.days} days`);
    out.seeded = await seedCostLedger(handle, settings, now);
    log(`costs: seeded ${JSON.stringify(out.seeded)}`);
    await sql`CHECKPOINT`.execute(handle.db);
    const store = new SqlCostStore(handle.db);
    const today = now.toISOString().slice(0, 10);
    const dayBefore = (days: number) => new Date(Date.parse(today) - (days - 1) * dayMs).toISOString().slice(0, 10);
    for (const days of [settings.days, 7]) {
      const asked = statsRange({ from: dayBefore(days), to: today }, now);
      if ('problems' in asked) throw new Error(`costs: ${JSON.stringify(asked.problems)}`);
      const { since, before } = asked.range;
      for (const by of costGroupings) {
        await store.groups(by, since, before);
        const runsMs: number[] = [];
        let answer: Awaited<ReturnType<SqlCostStore['groups']>> = [];
        for (let i = 0; i < settings.runs; i++) {
          const t0 = performance.now();
          answer = await store.groups(by, since, before);
          runsMs.push(Math.round((performance.now() - t0) * 10) / 10);
        }
        const timing: CostsTiming = {
          by,
          days,
          groups: answer.length,
          sends: answer.reduce((n, g) => n + g.sends, 0),
          runsMs,
          medianMs: median(runsMs),
          maxMs: Math.max(...runsMs),
        };
        out.timings.push(timing);
        log(`costs --by ${by}, ${days} days: ${timing.groups} groups of ${timing.sends} sends, median ${timing.medianMs} ms, max ${timing.maxMs} ms (${runsMs.join(', ')})`);
      }
    }
    const slowest = out.timings.filter((t) => t.days === settings.days).sort((a, b) => b.medianMs - a.medianMs)[0];
    if (slowest) {
      const asked = statsRange({ from: dayBefore(settings.days), to: today }, now);
      if ('range' in asked) {
        const query = costGroupsQuery(slowest.by, asked.range.since, asked.range.before);
        const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (ANALYZE, BUFFERS) ${query}`.execute(handle.db);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        out.slowestPlan = { by: slowest.by, days: settings.days, plan };
        log(`costs: plan of --by ${slowest.by} over ${settings.days} days:\n${plan}`);
      }
    }
  } finally {
    await handle.close();
  }
}
