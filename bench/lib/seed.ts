import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Verifications written straight into the service's tables with one INSERT ... SELECT generate_series, so a
 * benchmark has many PENDING rows with a known code without paying for them through HTTP. Row i of series
 * `series` has id md5(series || i) as a uuid, code `seedOtp`, and expires an hour from now.
 */
export const seedOtp = '123456';

/** The id of row `i` of a seeded series, computed the same way as the SQL below. */
export function seededId(series: string, i: number): string {
  const h = createHash('md5').update(`${series}${i}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface SeedOptions {
  readonly clientId: string;
  /** A short tag that keeps the ids of one series apart from every other series. */
  readonly series: string;
  readonly count: number;
  readonly webhookUrl?: string | null;
}

/** The INSERT ... SELECT generate_series statement of a seeded series, with its parameters. */
export function seedQuery(options: SeedOptions): { readonly text: string; readonly values: unknown[] } {
  return {
    text: `INSERT INTO verifications (id, client_id, type, status, otp, phone_number, country_code, paired_number,
       counter, webhook_url, reference, created_at, updated_at, expires_at, last_send_at)
     SELECT md5($2::text || i::text)::uuid, $1::uuid, 'SMS', 'PENDING', $4, '+234803' || lpad((i % 10000000)::text, 7, '0'),
       '+234', '09010000000', 0, $5, NULL, now(), now(), now() + interval '1 hour', now()
     FROM generate_series(0, $3::int - 1) AS i`,
    values: [options.clientId, options.series, options.count, seedOtp, options.webhookUrl ?? null],
  };
}

export async function seedVerifications(db: pg.Pool | pg.Client, options: SeedOptions): Promise<void> {
  const { text, values } = seedQuery(options);
  await db.query(text, values);
}

/** Parses BENCH_SEED ("series:count,series:count"), the series the service child seeds for its own client. */
export function parseSeedList(raw: string | undefined): { series: string; count: number }[] {
  if (!raw) return [];
  return raw.split(',').map((part) => {
    const [series, count] = part.split(':');
    const n = Number(count);
    if (!series || !Number.isInteger(n) || n < 0) throw new Error(`bad BENCH_SEED entry "${part}"`);
    return { series, count: n };
  });
}
