/**
 * The providers section's late-provider scenario: an SMSC that answers every submit_sm after the service's
 * PROVIDER_TIMEOUT_MS (bench/serve-smsc.ts with SMSC_SUBMIT_DELAY_MS), under creates paced at a fixed rate.
 * Measured: copies sent per verification (submit_sm per destination, over every attempt, once nothing is due any
 * more) and verifications wrongly FAILED. With BENCH_BASELINE_REF the same runs against the service of that git
 * ref (a detached worktree beside this one sharing its node_modules), right after ours.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { baselineCheckout, freshDatabase } from './baseline.js';
import { PhoneSequence } from './phones.js';
import { paced, startService, startSmsc } from './provider-scenarios.js';

export interface LateProviderSide {
  /** Which code: ours, or the baseline ref. */
  readonly code: string;
  readonly created: number;
  /** submit_sm the SMSC got for the created verifications, every attempt counted. */
  readonly submits: number;
  readonly copiesPerVerification: number;
  /** Verifications with more than one copy. */
  readonly duplicated: number;
  /** FAILED (UNDELIVERABLE) though the SMSC took every message. */
  readonly wronglyFailed: number;
  /** SENT (or later) as they should be. */
  readonly sent: number;
}

export interface LateProviderResults {
  readonly rate: number;
  readonly seconds: number;
  readonly submitDelayMs: number;
  readonly providerTimeoutMs: number;
  readonly ours: LateProviderSide | null;
  readonly baseline: LateProviderSide | null;
  readonly baselineRef: string | null;
}

export interface LateProviderOptions {
  readonly rate: number;
  readonly seconds: number;
  readonly connections: number;
  readonly serviceEnv: () => NodeJS.ProcessEnv;
  readonly db: pg.Pool;
  readonly log: (text: string) => void;
  /** A git ref to measure beside ours (BENCH_BASELINE_REF); null: ours only. */
  readonly baselineRef: string | null;
}

const submitDelayMs = 1_500;
const providerTimeoutMs = 1_000;


async function side(o: LateProviderOptions, code: string, phones: PhoneSequence, benchDir?: string): Promise<LateProviderSide> {
  const databaseUrl = await freshDatabase(o.db, String(o.serviceEnv().DATABASE_URL), benchDir ? 'otp_late_baseline' : 'otp_late_ours');
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const smsc = await startSmsc({ SMSC_SUBMIT_DELAY_MS: String(submitDelayMs) });
  try {
    const env = {
      ...o.serviceEnv(),
      DATABASE_URL: databaseUrl,
      SMS_PROVIDER: 'smpp',
      SMPP_URL: `smpp://bench:benchpw@127.0.0.1:${smsc.port}`,
      // Room for every submit_sm outstanding at the rate for the SMSC's delay.
      SMPP_WINDOW: '1000',
      PROVIDER_TIMEOUT_MS: String(providerTimeoutMs),
      SEND_LEASE_MS: '10000',
      SEND_RETRY_DELAYS: '1,1,1',
    };
    const service = await startService(env, benchDir);
    try {
      await smsc.reset(true);
      const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
      const sent = await paced(service.url, o.connections, Math.round(o.rate * o.seconds), o.rate, () => {
        const local = phones.take();
        return { key: `234${local.slice(1)}`, path: '/v1/otp/request', headers, body: JSON.stringify({ countryCode: '+234', phoneNumber: local }) };
      });
      const created = sent.filter((s) => s.status === 200);
      const ids = created.flatMap((s) => {
        try {
          const id: unknown = (JSON.parse(s.body) as { data?: { id?: unknown } }).data?.id;
          return typeof id === 'string' ? [id] : [];
        } catch {
          return [];
        }
      });
      // Until no send job of these is pending and the SMSC has had nothing new for 3 s (at most 60 s).
      const deadline = Date.now() + 60_000;
      let last = -1;
      let quietSince = Date.now();
      for (;;) {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM send_jobs WHERE verification_id = ANY($1::uuid[]) AND status = 'pending'`, [ids]);
        const submits = (await smsc.log()).submits;
        if (submits !== last) {
          last = submits;
          quietSince = Date.now();
        }
        if (((rows[0]?.n ?? 0) === 0 && Date.now() - quietSince > 3_000) || Date.now() > deadline) break;
        await sleep(500);
      }
      const wanted = new Set(created.map((s) => s.key));
      const perDestination = new Map<string, number>();
      for (const [destination] of (await smsc.log()).entries) {
        if (wanted.has(destination)) perDestination.set(destination, (perDestination.get(destination) ?? 0) + 1);
      }
      const submits = [...perDestination.values()].reduce((a, b) => a + b, 0);
      const { rows } = await db.query<{ status: string; delivery_status: string; n: number }>(
        `SELECT status, delivery_status, count(*)::int AS n FROM verifications WHERE id = ANY($1::uuid[]) GROUP BY 1, 2`,
        [ids],
      );
      const count = (match: (r: { status: string; delivery_status: string }) => boolean) => rows.filter(match).reduce((a, r) => a + r.n, 0);
      return {
        code,
        created: ids.length,
        submits,
        copiesPerVerification: ids.length === 0 ? 0 : Math.round((submits / ids.length) * 1000) / 1000,
        duplicated: [...perDestination.values()].filter((n) => n > 1).length,
        wronglyFailed: count((r) => r.status === 'FAILED'),
        sent: count((r) => r.delivery_status === 'SENT' || r.delivery_status === 'DELIVERED'),
      };
    } finally {
      await service.child.stop();
    }
  } finally {
    await smsc.child.stop();
    await db.end();
  }
}

export async function benchLateProvider(o: LateProviderOptions): Promise<LateProviderResults> {
  const ours = await side(o, 'ours', new PhoneSequence(70_000_000));
  o.log(`providers: late SMSC, ours ${JSON.stringify(ours)}`);
  let baseline: LateProviderSide | null = null;
  if (o.baselineRef) {
    baseline = await side(o, o.baselineRef, new PhoneSequence(75_000_000), baselineCheckout(o.baselineRef));
    o.log(`providers: late SMSC, baseline ${JSON.stringify(baseline)}`);
  }
  return { rate: o.rate, seconds: o.seconds, submitDelayMs, providerTimeoutMs, ours, baseline, baselineRef: o.baselineRef };
}
