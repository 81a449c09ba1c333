/**
 * `npm run bench`: throughput, latency, webhooks and memory of the service against its baselines, measured in
 * one run on this machine. Prints one markdown table and writes bench/results.json. See bench/README.md.
 *
 * Each comparison is measured back to back (ours, then its baselines), so that other work on a shared machine
 * drifts as little as possible between the two sides of a ratio.
 */
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startTempPostgres } from '../scripts/temp-postgres.js';
import { benchBetterAuthSend, benchBetterAuthVerify, seedBetterAuth } from './lib/better-auth-scenarios.js';
import { benchDir, killAllChildren, startChild, stringFields, type Child } from './lib/child.js';
import { cleanUp, onCleanup, once, tempDir } from './lib/cleanup.js';
import { dbLimitCreate, dbLimitFetch, dbLimitVerify } from './lib/db-limit.js';
import { benchRoutes } from './lib/routes-scenario.js';
import { benchDeliveryFailover } from './lib/delivery-failover-scenario.js';
import { benchDropIn } from './lib/drop-in-scenario.js';
import {
  dbLimitCreateBatched,
  dbLimitFetchBatched,
  dbLimitVerifyBatched,
  type BatchedDbLimitResult,
} from './lib/db-limit-batched.js';
import { runLoad, warmUp, type LoadResult } from './lib/load.js';
import { packageVersion } from './lib/package-version.js';
import { benchCalls, emptyCallResults, type CallBenchSettings } from './lib/call-scenarios.js';
import { benchCreateBaseline } from './lib/create-baseline-scenario.js';
import { benchCosts, emptyCostsResults, type CostsSettings } from './lib/costs-scenario.js';
import { benchFailover, emptyFailoverResults, type FailoverSettings } from './lib/failover-scenario.js';
import { benchFallback, emptyFallbackResults, type FallbackBenchSettings } from './lib/fallback-scenario.js';
import { benchProviders, emptyProviderResults, type ProviderBenchSettings } from './lib/provider-scenarios.js';
import { benchSilent, emptySilentResults } from './lib/silent-scenario.js';
import { checkPhoneSequence, PhoneSequence } from './lib/phones.js';
import { benchCarrierCache } from './lib/carrier-cache.js';
import { attacks, simulatePumping, type PumpingResults, type PumpingSettings } from './lib/pumping.js';
import { fmt, gateByLoad, machineInfo, mib, renderReport } from './lib/report.js';
import { seededId, seedOtp, seedVerifications } from './lib/seed.js';
import {
  benchCreate,
  benchFetch,
  benchTokenEndpoint,
  benchVerify,
  fetchToken,
  tokenForm,
  type Created,
  type ScenarioSettings,
  type ServiceTarget,
} from './lib/service-scenarios.js';
import { standingNotes, summaryRows, type Results } from './lib/summary.js';
import { benchWebhooks } from './lib/webhook-scenario.js';
import { runBackupCli } from './lib/backup-scenario.js';
import { startWebhookReceiver } from './lib/webhook-receiver.js';

const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw ? Number(raw) : fallback;
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`);
  return value;
};

const s: ScenarioSettings = {
  connections: envInt('BENCH_CONNECTIONS', 50),
  seconds: envInt('BENCH_SECONDS', 10),
  warmUpSeconds: envInt('BENCH_WARMUP_SECONDS', 2),
};
const memoryRows = envInt('BENCH_MEMORY_ROWS', 1_000_000);
const webhookRate = envInt('BENCH_WEBHOOK_RATE', 1000);
const webhookSeconds = envInt('BENCH_WEBHOOK_SECONDS', 10);
const webhookBatch = envInt('BENCH_WEBHOOK_BATCH', 20_000);
/** PENDING verifications seeded for each verify run (more than a run can use, so every verify is a real one). */
const verifyPool = envInt('BENCH_VERIFY_POOL', 150_000);
/** The drop-in section: /v2 against /v1 in BENCH_DROPIN_ROUNDS alternating rounds per side, each of BENCH_SECONDS. */
const dropInRounds = envInt('BENCH_DROPIN_ROUNDS', 2);
const dropInPool = verifyPool;
const providerSettings: ProviderBenchSettings = {
  rate: envInt('BENCH_PROVIDER_RATE', 500),
  seconds: envInt('BENCH_PROVIDER_SECONDS', 10),
  warmUpSeconds: envInt('BENCH_PROVIDER_WARMUP_SECONDS', 2),
  smppSeconds: envInt('BENCH_SMPP_SECONDS', 5),
  window: 10,
  connections: s.connections,
};
/** The silent section: the providers section's pacing, at BENCH_SILENT_RATE (the providers' rate unless set). */
const silentSettings: ProviderBenchSettings = { ...providerSettings, rate: envInt('BENCH_SILENT_RATE', providerSettings.rate) };
const pumpingSettings: PumpingSettings = {
  minutes: envInt('BENCH_PUMPING_MINUTES', 20),
  ordinaryPerSecond: 4,
  ordinaryVerifyShare: 0.85,
  attackPerSecond: envInt('BENCH_PUMPING_ATTACK_RATE', 4),
  warmUpUsers: envInt('BENCH_PUMPING_WARMUP_USERS', 2400),
  returningShare: 0.6,
  natShare: 0.3,
  // An assumption too: new users who sign up from an address abroad (roaming, a VPN, a data centre's).
  abroadShare: Number(process.env.BENCH_PUMPING_ABROAD_SHARE ?? 0.03),
  // An assumption, not a measurement (see docs/fraud-defaults.md): about one user in eight asks for the code again.
  resendShare: Number(process.env.BENCH_PUMPING_RESEND_SHARE ?? 0.12),
  secondResendShare: 0.2,
  leadMinutes: envInt('BENCH_PUMPING_LEAD_MINUTES', 0),
  captchaWhenThrottled: process.env.BENCH_PUMPING_CAPTCHA === 'throttled',
  serviceEnv: Object.fromEntries(
    (process.env.BENCH_PUMPING_SERVICE_ENV ?? '')
      .split(',')
      .filter((x) => x.includes('='))
      .map((x) => [x.slice(0, x.indexOf('=')).trim(), x.slice(x.indexOf('=') + 1).trim()]),
  ),
};
const fallbackSettings: FallbackBenchSettings = {
  count: envInt('BENCH_FALLBACK_COUNT', 10_000),
  rate: envInt('BENCH_FALLBACK_RATE', 500),
  afterSeconds: envInt('BENCH_FALLBACK_AFTER_SECONDS', 30),
  connections: s.connections,
};
const callSettings: CallBenchSettings = {
  rate: envInt('BENCH_CALL_RATE', 200),
  seconds: envInt('BENCH_CALL_SECONDS', 10),
  warmUpSeconds: envInt('BENCH_CALL_WARMUP_SECONDS', 2),
  connections: s.connections,
};
const failoverSettings: FailoverSettings = {
  runs: envInt('BENCH_FAILOVER_RUNS', 5),
  connections: s.connections,
  databaseTimeoutMs: 3_000,
};
const costsSettings: CostsSettings = {
  sends: envInt('BENCH_COSTS_SENDS', 1_000_000),
  verifications: envInt('BENCH_COSTS_VERIFICATIONS', 700_000),
  days: 30,
  runs: envInt('BENCH_COSTS_RUNS', 5),
};
const allSections = ['ceiling', 'create-baseline', 'token', 'create', 'fetch', 'verify', 'drop-in', 'routes', 'webhooks', 'pglite', 'memory', 'backup', 'costs', 'carrier-cache', 'providers', 'silent', 'calls', 'fallback', 'delivery-failover', 'pumping', 'failover'];
const sections = new Set((process.env.BENCH_SECTIONS ?? 'all').split(',').map((x) => x.trim()));
const on = (name: string) => sections.has('all') || sections.has(name);

const log = (text: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
const short = (r: LoadResult) =>
  `${fmt(r.okRps)} ok/s (${fmt(r.rps)} resp/s), p50 ${r.p50} ms, p99 ${r.p99} ms, statuses ${JSON.stringify(r.statuses)}` +
  (r.errors ? `, errors ${r.errors}` : '');

const shortBatched = (r: BatchedDbLimitResult) =>
  `${fmt(r.opsPerSecond)} ops/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
  Object.entries(r.batches)
    .map(([name, b]) => `${name} ${b.flushes} flushes of ${b.meanItems} on average`)
    .join(', ') +
  (r.errors ? `, errors ${r.errors}` : '');

interface ServiceInfo {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
}
const parseService = (v: unknown): ServiceInfo => stringFields(v, ['url', 'clientId', 'clientSecret']);

/** The service's settings for the bench: limits out of the way, quiet, private webhook targets allowed. */
function serviceEnv(dataDir: string, databaseUrl: string | null, seed: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // Not production: the log provider stands in for a real one here, and NODE_ENV=production refuses it. The
    // service reads NODE_ENV only for its log format and start-up warnings, so this changes nothing measured.
    NODE_ENV: 'bench',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    CLIENT_RATE_LIMIT_PER_SECOND: '0',
    PHONE_LIMIT_COUNT: '1000000000',
    // Checked on every create (its cost is measured) but never reached.
    PREFIX_LIMIT_COUNT: '1000000000',
    // On by default: claimed in shares on every create (its cost is measured) but never reached.
    CLIENT_DAILY_SEND_LIMIT: '1000000000',
    // Conversion is read every 10 s (its cost is measured) but never judged: no code of the bench is verified. The
    // short window has a sample of its own: left at its default, it throttled the bench's country within a minute
    // of creates, and every later create counted the country's creates under the throttle (a section's second
    // run of creates measured that, at a twentieth of the first's pace).
    MIN_CONVERSION_SAMPLE: '1000000000',
    MIN_CONVERSION_SHORT_SAMPLE: '1000000000',
    PHONE_COOLDOWN_SECONDS: '0',
    // Longer than the whole run, so the expiry sweep has nothing to do.
    OTP_TTL_SECONDS: '3600',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // One database connection per load connection, as the database limit and better-auth get.
    DATABASE_POOL_SIZE: String(s.connections),
    BENCH_SEED: seed,
  };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  return env;
}

async function startService(dataDir: string, databaseUrl: string | null, seed = '') {
  const child = await startChild('serve-service.ts', serviceEnv(dataDir, databaseUrl, seed), parseService, 180_000);
  onCleanup(() => child.stop());
  const { url, clientId, clientSecret } = child.info;
  const token = await fetchToken(url, clientId, clientSecret);
  const target: ServiceTarget = { url, clientId, clientSecret, token };
  return { child, target };
}

/** Waits until the send worker has sent every queued code, so its work does not spill into the next run. */
async function awaitSendQueue(db: pg.Pool, maxMs = 90_000): Promise<void> {
  const deadline = performance.now() + maxMs;
  while (performance.now() < deadline) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM send_jobs WHERE status = 'pending' AND next_attempt_at < now() + interval '1 hour'`,
    );
    if ((rows[0]?.n ?? 0) === 0) return;
    await sleep(250);
  }
  log('send queue still not empty; going on');
}

function newResults(): Results {
  return {
    startedAt: new Date().toISOString(),
    seconds: 0,
    settings: {
      connections: s.connections,
      secondsPerScenario: s.seconds,
      warmUpSeconds: s.warmUpSeconds,
      memoryRows,
      webhookRate,
      webhookSeconds,
      webhookBatch,
      verifyPool,
      providerRate: providerSettings.rate,
      silentRate: silentSettings.rate,
      callRate: callSettings.rate,
      callSeconds: callSettings.seconds,
      providerSeconds: providerSettings.seconds,
      providerWarmUpSeconds: providerSettings.warmUpSeconds,
      smppSeconds: providerSettings.smppSeconds,
      failoverRuns: failoverSettings.runs,
      costsSends: costsSettings.sends,
      costsVerifications: costsSettings.verifications,
      costsRuns: costsSettings.runs,
      sections: [...sections].join(','),
    },
    machine: null,
    load: {},
    dbLimit: {},
    webhooks: null,
    memory: null,
    createRss: null,
    providers: null,
    silent: null,
    calls: null,
    fallback: null,
    deliveryFailover: null,
    pumping: null,
    backup: null,
    failover: null,
    costs: null,
    carrierCache: null,
    rows: [],
    sectionSeconds: {},
    sectionLoadAverage: {},
    notes: [],
    failures: [],
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const results = newResults();
  checkPhoneSequence();
  for (const name of sections) {
    if (name !== 'all' && !allSections.includes(name)) throw new Error(`unknown section ${name}; known: ${allSections.join(', ')}`);
  }

  log('starting PostgreSQL (fsync=on, synchronous_commit=on)');
  const postgres = await startTempPostgres({ shared_buffers: "'512MB'" });
  onCleanup(() => postgres.stop());
  const serviceUrl = postgres.url.replace(/\/postgres$/, '/otp_service');
  const betterAuthUrl = postgres.url.replace(/\/postgres$/, '/better_auth');
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  onCleanup(once(() => admin.end()));
  await admin.query('CREATE DATABASE otp_service');
  await admin.query('CREATE DATABASE better_auth');
  // The providers section's services get a database of their own: no other section's rows or send jobs.
  const providersUrl = postgres.url.replace(/\/postgres$/, '/otp_providers');
  if (on('providers')) await admin.query('CREATE DATABASE otp_providers');
  const silentUrl = postgres.url.replace(/\/postgres$/, '/otp_silent');
  if (on('silent')) await admin.query('CREATE DATABASE otp_silent');
  const callsUrl = postgres.url.replace(/\/postgres$/, '/otp_calls');
  if (on('calls')) await admin.query('CREATE DATABASE otp_calls');
  const fallbackUrl = postgres.url.replace(/\/postgres$/, '/otp_fallback');
  if (on('fallback')) await admin.query('CREATE DATABASE otp_fallback');
  const deliveryFailoverUrl = postgres.url.replace(/\/postgres$/, '/otp_delivery_failover');
  if (on('delivery-failover')) await admin.query('CREATE DATABASE otp_delivery_failover');
  const costsUrl = postgres.url.replace(/\/postgres$/, '/otp_costs');
  if (on('costs')) await admin.query('CREATE DATABASE otp_costs');
  /** Flushes what the previous run left in PostgreSQL, so it is not paid for by the next one. */
  const settle = async () => {
    await admin.query('CHECKPOINT');
  };
  results.machine = machineInfo(postgres.version, {
    fastify: packageVersion('fastify'),
    kysely: packageVersion('kysely'),
    pg: packageVersion('pg'),
    '@electric-sql/pglite': packageVersion('@electric-sql/pglite'),
    autocannon: packageVersion('autocannon'),
    'oidc-provider': packageVersion('oidc-provider'),
    'better-auth': packageVersion('better-auth'),
  });
  const receiver = await startWebhookReceiver();
  onCleanup(() => receiver.close());

  const section = async (name: string, work: () => Promise<void>) => {
    if (!on(name)) return;
    const t0 = performance.now();
    await settle();
    // A section starts on a quiet machine, or its rows are not written: the last one's own load (the bench keeps
    // two or three busy) dies away within a minute or so, other work may not.
    const load = await quietMachine(name);
    results.sectionLoadAverage[name] = load;
    log(`section ${name}: start (1-min load average ${load})`);
    try {
      await work();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      results.failures.push(`${name}: ${message}`);
      log(`section ${name} FAILED: ${message}`);
    }
    const seconds = (performance.now() - t0) / 1000;
    results.sectionSeconds[name] = Math.round(seconds * 10) / 10;
    log(`section ${name}: ${seconds.toFixed(1)} s`);
  };

  /** better-auth, started on first use; `disableCleanup` restarts it with that option when it differs. */
  const peer: { current: { child: Child<{ url: string; version: string }>; disableCleanup: boolean } | null } = {
    current: null,
  };
  const betterAuth = async (disableCleanup: boolean) => {
    if (peer.current && peer.current.disableCleanup === disableCleanup) return peer.current.child;
    await peer.current?.child.stop();
    const env = {
      ...process.env,
      NODE_ENV: 'production',
      BETTER_AUTH_DATABASE_URL: betterAuthUrl,
      BETTER_AUTH_DISABLE_CLEANUP: String(disableCleanup),
      POOL_SIZE: String(s.connections),
    };
    const child = await startChild('serve-better-auth.ts', env, (v) => stringFields(v, ['url', 'version']));
    onCleanup(() => child.stop());
    peer.current = { child, disableCleanup };
    return child;
  };

  await section('ceiling', async () => {
    const env = { ...process.env, NODE_ENV: 'production' };
    const child = await startChild('serve-ceiling.ts', env, (v) => stringFields(v, ['url']));
    onCleanup(() => child.stop());
    const options = { url: child.info.url, connections: s.connections, seconds: s.seconds, path: '/ping' };
    await warmUp(options, s.warmUpSeconds);
    results.load.ceiling = await runLoad(options);
    log(`ceiling: ${short(results.load.ceiling)}`);
    await child.stop();
  });

  // A change to the create path against the code before it (BENCH_BASELINE_REF), side by side in this run.
  await section('create-baseline', async () => {
    const ref = process.env.BENCH_BASELINE_REF;
    if (!ref) {
      results.notes.push('create-baseline: skipped, no BENCH_BASELINE_REF');
      return;
    }
    const pools: pg.Pool[] = [];
    onCleanup(() => Promise.all(pools.map((p) => p.end())).then(() => undefined));
    const r = await benchCreateBaseline({
      ...s,
      ref,
      rounds: envInt('BENCH_BASELINE_ROUNDS', 3),
      serviceEnv: () => serviceEnv(tempDir('baseline'), serviceUrl, ''),
      admin,
      pool: (url) => {
        const pool = new pg.Pool({ connectionString: url, max: 2 });
        pools.push(pool);
        return pool;
      },
      between: async (db) => {
        await awaitSendQueue(db);
        await settle();
      },
      log,
    });
    results.load.createOurs = r.ours;
    results.load.createBaseline = r.baseline;
    results.createBaselineCpu = { ours: r.oursPerCpuSecond, baseline: r.baselinePerCpuSecond, ref: r.ref };
    results.notes.push(`create-baseline: ${r.rounds} alternating rounds per side against ${r.ref}`);
    log(`create-baseline (${r.rounds} rounds per side): ours ${short(r.ours)}; ${r.ref} ${short(r.baseline)}`);
  });

  const needService = ['token', 'create', 'fetch', 'verify', 'drop-in', 'routes', 'webhooks', 'memory', 'backup'].some(on);
  if (needService) {
    const { child, target } = await startService(tempDir('pg'), serviceUrl);
    const db = new pg.Pool({ connectionString: serviceUrl, max: 4 });
    const closeDb = once(() => db.end());
    onCleanup(closeDb);
    const rss: { label: string; bytes: number }[] = [];
    const noteRss = (label: string) => rss.push({ label, bytes: child.rss() });
    const dbOptions = { url: serviceUrl, clientId: target.clientId, concurrency: s.connections, seconds: s.seconds };

    log('seeding PENDING verifications with known codes (generate_series)');
    const seeds: [string, number, string | null][] = [
      ['v', on('fetch') || on('verify') ? verifyPool : 0, null],
      ['d', on('verify') ? verifyPool : 0, null],
      // The batched database limit for verify gets its own never-verified rows.
      ['e', on('verify') ? verifyPool : 0, null],
      ['w', on('webhooks') ? webhookRate * webhookSeconds : 0, receiver.url],
      ['x', on('webhooks') ? webhookBatch : 0, receiver.url],
      // The drop-in section's checks: /v1's (a) and /v2's (b).
      ['a', on('drop-in') ? dropInPool : 0, null],
      ['b', on('drop-in') ? dropInPool : 0, null],
    ];
    for (const [series, count, webhookUrl] of seeds) {
      if (count > 0) await seedVerifications(db, { clientId: target.clientId, series, count, webhookUrl });
    }
    await db.query('VACUUM ANALYZE');
    noteRss('idle after start');

    await section('token', async () => {
      const form = tokenForm(target.clientId, target.clientSecret);
      results.load.token = await benchTokenEndpoint(target.url, '/oauth/token', form, s);
      log(`token: ${short(results.load.token)}`);
      const parse = (v: unknown) => stringFields(v, ['url', 'clientId', 'clientSecret', 'version']);
      const oidc = await startChild('serve-oidc-provider.ts', { ...process.env, NODE_ENV: 'production' }, parse);
      onCleanup(() => oidc.stop());
      const oidcForm = tokenForm(oidc.info.clientId, oidc.info.clientSecret);
      results.load.oidcProviderToken = await benchTokenEndpoint(oidc.info.url, '/token', oidcForm, s);
      log(`oidc-provider token: ${short(results.load.oidcProviderToken)}`);
      await oidc.stop();
    });

    await section('create', async () => {
      const before = child.rss();
      noteRss('before create');
      const { result, created } = await benchCreate(target, new PhoneSequence(0), s);
      results.load.create = result;
      noteRss(`after create (${created.length} created through HTTP in the measured run, plus the warm-up)`);
      results.createRss = { before, after: child.rss(), createdThroughHttp: created.length };
      log(`create: ${short(result)}`);
      await awaitSendQueue(db);
      await settle();
      results.dbLimit.create = await dbLimitCreate({ ...dbOptions, phoneOffset: 40_000_000 });
      log(`db limit create: ${fmt(results.dbLimit.create.opsPerSecond)} ops/s, p99 ${results.dbLimit.create.p99.toFixed(1)} ms`);
      await settle();
      const createBatched = await dbLimitCreateBatched({ ...dbOptions, phoneOffset: 50_000_000 });
      results.dbLimit.createBatched = createBatched;
      log(`batched db limit create: ${shortBatched(createBatched)}`);
      const peerChild = await betterAuth(false);
      await settle();
      results.load.betterAuthSend = await benchBetterAuthSend(peerChild.info.url, new PhoneSequence(20_000_000), s);
      log(`better-auth send-otp: ${short(results.load.betterAuthSend)}`);
    });

    await section('fetch', async () => {
      results.load.fetch = await benchFetch(target, () => seededId('v', randomInt(verifyPool)), s);
      log(`fetch: ${short(results.load.fetch)}`);
      await settle();
      results.dbLimit.fetch = await dbLimitFetch({ ...dbOptions, series: 'v', count: verifyPool });
      log(`db limit fetch: ${fmt(results.dbLimit.fetch.opsPerSecond)} ops/s`);
      await settle();
      const fetchBatched = await dbLimitFetchBatched({ ...dbOptions, series: 'v', count: verifyPool });
      results.dbLimit.fetchBatched = fetchBatched;
      log(`batched db limit fetch: ${shortBatched(fetchBatched)}`);
    });

    await section('verify', async () => {
      let next = 0;
      const pooled = () => (next < verifyPool ? { id: seededId('v', next++), otp: seedOtp } : null);
      results.load.verify = await benchVerify(target, pooled, s);
      log(`verify: ${short(results.load.verify)} (${next} of ${verifyPool} pooled verifications used)`);
      if (next >= verifyPool) results.notes.push('verify pool ran dry: later verifies answered 409 (raise BENCH_VERIFY_POOL)');
      noteRss('after fetch and verify');
      await settle();
      results.dbLimit.verify = await dbLimitVerify({ ...dbOptions, series: 'd', count: verifyPool });
      log(`db limit verify: ${fmt(results.dbLimit.verify.opsPerSecond)} ops/s`);
      await settle();
      const verifyBatched = await dbLimitVerifyBatched({ ...dbOptions, series: 'e', count: verifyPool });
      results.dbLimit.verifyBatched = verifyBatched;
      log(`batched db limit verify: ${shortBatched(verifyBatched)} (${verifyBatched.moved} of ${verifyPool} seeded rows verified)`);
      if (verifyBatched.ops + verifyBatched.errors >= verifyPool) {
        results.notes.push('batched database-limit verify ran out of seeded rows (raise BENCH_VERIFY_POOL)');
      }
      // As shipped: every code lookup also deletes expired codes (a scan of its verification table).
      let peerChild = await betterAuth(false);
      await seedBetterAuth(betterAuthUrl, 0, verifyPool);
      await settle();
      results.load.betterAuthVerify = await benchBetterAuthVerify(peerChild.info.url, 0, verifyPool, s);
      log(`better-auth verify: ${short(results.load.betterAuthVerify)}`);
      // Tuned: verification.disableCleanup, so a lookup is an index read only.
      peerChild = await betterAuth(true);
      await seedBetterAuth(betterAuthUrl, verifyPool, verifyPool);
      await settle();
      results.load.betterAuthVerifyNoCleanup = await benchBetterAuthVerify(peerChild.info.url, verifyPool, verifyPool, s);
      log(`better-auth verify (disableCleanup): ${short(results.load.betterAuthVerifyNoCleanup)}`);
    });
    await peer.current?.child.stop();

    await section('drop-in', async () => {
      const r = await benchDropIn(target, { ...s, rounds: dropInRounds, v2First: false, pool: dropInPool, v1PhoneOffset: 60_000_000, v2PhoneOffset: 70_000_000 });
      results.load.dropInV1Create = r.v1Create;
      results.load.dropInV2Create = r.v2Create;
      results.load.dropInV1Check = r.v1Check;
      results.load.dropInV2Check = r.v2Check;
      results.load.dropInSideV1Create = r.sideBySide.v1Create;
      results.load.dropInSideV2Create = r.sideBySide.v2Create;
      results.load.dropInSideV1Check = r.sideBySide.v1Check;
      results.load.dropInSideV2Check = r.sideBySide.v2Check;
      log(`drop-in (${r.rounds} alternating rounds per side): /v1 create ${short(r.v1Create)}; /v2 create ${short(r.v2Create)}`);
      log(`drop-in: /v1 verify ${short(r.v1Check)}; /v2 VerificationCheck ${short(r.v2Check)}`);
      log(`drop-in side by side: /v1 create ${short(r.sideBySide.v1Create)}; /v2 create ${short(r.sideBySide.v2Create)}`);
      log(`drop-in side by side: /v1 verify ${short(r.sideBySide.v1Check)}; /v2 VerificationCheck ${short(r.sideBySide.v2Check)}`);
      if ([r.v1Check, r.sideBySide.v1Check].some((x) => x.statuses['409']) || [r.v2Check, r.sideBySide.v2Check].some((x) => x.statuses['404'])) {
        results.notes.push('drop-in check pool ran dry: later checks answered 409 (/v1) or 404 (/v2) and the ratio is off (raise BENCH_VERIFY_POOL)');
      }
      await awaitSendQueue(db);
    });

    await section('routes', async () => {
      const r = await benchRoutes(target, db, { ...s, rounds: dropInRounds, phoneOffset: 80_000_000 }, async () => {
        await awaitSendQueue(db);
        await settle();
      });
      results.load.routesWithout = r.without;
      results.load.routesWith = r.with;
      log(`routes (${r.rounds} alternating rounds per side): no route ${short(r.without)}; ${r.routes} routes ${short(r.with)}`);
      await awaitSendQueue(db);
    });

    await section('webhooks', async () => {
      const items = (series: string, count: number): Created[] =>
        Array.from({ length: count }, (_, i) => ({ id: seededId(series, i), otp: seedOtp }));
      results.webhooks = await benchWebhooks(
        target,
        receiver,
        items('w', webhookRate * webhookSeconds),
        items('x', webhookBatch),
        { rate: webhookRate, connections: s.connections },
      );
      log(`webhooks: ${JSON.stringify(results.webhooks)}`);
    });

    await runPglite(results, section);

    await section('memory', async () => {
      await runLoad({
        url: target.url,
        connections: s.connections,
        seconds: 5,
        path: '/v1/otp/x',
        headers: { authorization: `Bearer ${target.token}` },
        setup: (req) => ({ ...req, path: `/v1/otp/${seededId('v', randomInt(verifyPool))}` }),
      });
      noteRss('before bulk insert');
      const before = rss[rss.length - 1]?.bytes ?? 0;
      const t0 = performance.now();
      await seedVerifications(db, { clientId: target.clientId, series: 'm', count: memoryRows });
      await db.query('ANALYZE verifications');
      const insertSeconds = (performance.now() - t0) / 1000;
      log(`inserted ${memoryRows} verifications in ${insertSeconds.toFixed(1)} s`);
      noteRss(`after SQL insert of ${memoryRows} verifications`);
      await settle();
      const spread = { ...s, warmUpSeconds: 0 };
      const fetchSpread = await benchFetch(target, () => seededId('m', randomInt(memoryRows)), spread);
      noteRss(`after ${fetchSpread.responses} fetches of random ids among them`);
      let k = 0;
      // A stride coprime with the row count visits the rows in a scattered order without repeats.
      const stride = 7919;
      const scattered = () => (k < memoryRows ? { id: seededId('m', (k++ * stride) % memoryRows), otp: seedOtp } : null);
      const verifySpread = await benchVerify(target, scattered, spread);
      noteRss(`after ${verifySpread.responses} verifies scattered among them`);
      const after = rss[rss.length - 1]?.bytes ?? 0;
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM verifications');
      const allowed = Math.max(32 * 2 ** 20, 0.1 * before);
      results.memory = {
        method:
          `${memoryRows} verifications inserted straight into PostgreSQL with generate_series (not through HTTP), ` +
          'then fetch and verify over random ids spread across them through HTTP; RSS of the service process from /proc',
        rows: memoryRows,
        rowsInTable: rows[0]?.n ?? 0,
        insertSeconds,
        rssBefore: before,
        rssAfter: after,
        growth: after - before,
        flatIf: `growth ≤ max(32 MiB, 10% of the RSS before) = ${mib(allowed)}`,
        flat: after - before <= allowed,
        fetchSpread,
        verifySpread,
      };
      log(`memory: ${mib(before)} -> ${mib(after)}`);
    });
    results.memory = { ...(results.memory ?? {}), timeline: rss };
    await section('backup', async () => {
      const { rows: counted } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM verifications');
      const have = counted[0]?.n ?? 0;
      if (have < memoryRows) {
        await seedVerifications(db, { clientId: target.clientId, series: 'k', count: memoryRows - have });
        await db.query('ANALYZE verifications');
      }
      const { rows: total } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM verifications');
      await settle();
      const createAlone = (await benchCreate(target, new PhoneSequence(60_000_000), s)).result;
      log(`create, no backup: ${short(createAlone)}`);
      await awaitSendQueue(db);
      await settle();
      const file = path.join(tempDir('backup'), 'backup.gz');
      const backup = runBackupCli(path.resolve(benchDir, '..'), serviceUrl, file);
      const createBeside = (await benchCreate(target, new PhoneSequence(70_000_000), s)).result;
      const overlappedWholeRun = backup.running();
      const { seconds, bytes } = await backup.done;
      log(`create beside a backup: ${short(createBeside)}; backup of ${total[0]?.n} verifications: ${seconds.toFixed(1)} s, ${mib(bytes)}`);
      results.backup = {
        method:
          '`otp-service backup` (its own process) against the PostgreSQL the service runs on, with the bench\'s seeded verifications; ' +
          'creates through HTTP for the same time without it, then while it runs',
        verifications: total[0]?.n ?? 0,
        seconds,
        bytes,
        createAlone,
        createBeside,
        overlappedWholeRun,
      };
      fs.rmSync(file, { force: true });
    });
    await child.stop();
    await closeDb();
  } else {
    await runPglite(results, section);
  }

  await section('costs', async () => {
    const out = emptyCostsResults(costsSettings);
    results.costs = out;
    await benchCosts({ databaseUrl: costsUrl, settings: costsSettings, log, out });
  });

  await section('carrier-cache', async () => {
    results.carrierCache = await benchCarrierCache();
    log(`carrier check cache hit: ${results.carrierCache.hitMicros.toFixed(2)} µs (an awaited answer already there: ${results.carrierCache.baselineMicros.toFixed(2)} µs)`);
  });

  await section('providers', async () => {
    const out = emptyProviderResults(providerSettings);
    results.providers = out;
    await benchProviders({
      settings: providerSettings,
      serviceEnv: () => serviceEnv(tempDir('providers'), providersUrl, ''),
      databaseUrl: providersUrl,
      log,
      out,
    });
  });

  await section('silent', async () => {
    const out = emptySilentResults(silentSettings);
    results.silent = out;
    await benchSilent({ settings: silentSettings, serviceEnv: () => serviceEnv(tempDir('silent'), silentUrl, ''), databaseUrl: silentUrl, log, out });
  });

  await section('calls', async () => {
    const out = emptyCallResults(callSettings);
    results.calls = out;
    await benchCalls({ settings: callSettings, serviceEnv: () => serviceEnv(tempDir('calls'), callsUrl, ''), log, out });
  });

  await section('fallback', async () => {
    const out = emptyFallbackResults(fallbackSettings);
    results.fallback = out;
    await benchFallback({ settings: fallbackSettings, serviceEnv: () => serviceEnv(tempDir('fallback'), fallbackUrl, ''), log, out });
  });

  await section('delivery-failover', async () => {
    const out = emptyFallbackResults(fallbackSettings);
    results.deliveryFailover = out;
    await benchDeliveryFailover({
      settings: fallbackSettings,
      serviceEnv: () => serviceEnv(tempDir('delivery-failover'), deliveryFailoverUrl, ''),
      databaseUrl: deliveryFailoverUrl,
      log,
      out,
    });
  });

  await section('pumping', async () => {
    const out: PumpingResults = { settings: pumpingSettings, runs: [] };
    results.pumping = out;
    const only = process.env.BENCH_PUMPING_ATTACKS?.split(',').map((x) => x.trim());
    for (const [i, attack] of attacks().entries()) {
      if (only && !only.includes(String(i + 1))) continue;
      await admin.query(`CREATE DATABASE otp_pumping_${i}`);
      const run = await simulatePumping(postgres.url.replace(/\/postgres$/, `/otp_pumping_${i}`), pumpingSettings, attack, log);
      out.runs.push(run);
      log(`pumping (${attack.name}): ${JSON.stringify(run)}`);
    }
  });

  await section('failover', async () => {
    const out = emptyFailoverResults(failoverSettings);
    results.failover = out;
    await benchFailover({
      settings: failoverSettings,
      startService: async (env) => {
        const child = await startChild('serve-service.ts', { ...serviceEnv(tempDir('failover'), null, ''), ...env }, parseService, 180_000);
        onCleanup(() => child.stop());
        return { ...child.info, stop: () => child.stop() };
      },
      log,
      out,
    });
  });

  await cleanUp(log);
  results.seconds = (performance.now() - started) / 1000;
  results.rows = gateByLoad(summaryRows(results), results.sectionLoadAverage, maxLoad);
  results.notes.push(...standingNotes(results));
  fs.writeFileSync(path.join(benchDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  if (!results.machine) throw new Error('no machine info');
  const report = renderReport(results.machine, results.rows, [
    ...results.notes,
    ...results.failures.map((f) => `FAILED ${f}`),
    `Whole run: ${results.seconds.toFixed(0)} s. Raw figures: bench/results.json.`,
  ]);
  process.stdout.write(report);
}

/**
 * BENCH_MAX_LOAD (the CPU count unless set): the 1-min load average above which a section's rows are not written;
 * a section first waits up to BENCH_LOAD_WAIT_SECONDS (120) for the load to fall under it.
 */
const maxLoad = Number(process.env.BENCH_MAX_LOAD ?? os.cpus().length);
const loadWaitSeconds = envInt('BENCH_LOAD_WAIT_SECONDS', 120);

/** The 1-min load average once under BENCH_MAX_LOAD, or as it stands after BENCH_LOAD_WAIT_SECONDS. */
async function quietMachine(name: string): Promise<number> {
  const now = () => Math.round((os.loadavg()[0] ?? 0) * 100) / 100;
  const until = performance.now() + loadWaitSeconds * 1000;
  let waited = false;
  while (now() > maxLoad && performance.now() < until) {
    if (!waited) log(`section ${name}: waiting for the load average (${now()}) to fall under ${maxLoad}`);
    waited = true;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  }
  return now();
}

/** The service again on the embedded database, in a temporary DATA_DIR, seeded inside its own process. */
async function runPglite(results: Results, section: (name: string, work: () => Promise<void>) => Promise<void>) {
  await section('pglite', async () => {
    log(`starting the service on PGlite, seeding ${verifyPool} verifications in it`);
    const { child, target } = await startService(tempDir('pglite'), null, `v:${verifyPool}`);
    const form = tokenForm(target.clientId, target.clientSecret);
    results.load.pgliteToken = await benchTokenEndpoint(target.url, '/oauth/token', form, s);
    log(`PGlite token: ${short(results.load.pgliteToken)}`);
    const { result } = await benchCreate(target, new PhoneSequence(30_000_000), s);
    results.load.pgliteCreate = result;
    log(`PGlite create: ${short(result)}`);
    // Reads beside writes, as an application's traffic mixes them: token and fetch requests (a fifth of the
    // connections each) while creates run on all of them; the reads must not wait behind the creates' database work.
    await sleep(3_000);
    const beside = { ...s, connections: Math.max(1, Math.round(s.connections / 5)) };
    const [createBeside, tokenBeside, fetchBeside] = await Promise.all([
      benchCreate(target, new PhoneSequence(35_000_000), s),
      benchTokenEndpoint(target.url, '/oauth/token', form, beside),
      benchFetch(target, () => seededId('v', randomInt(verifyPool)), beside),
    ]);
    results.load.pgliteCreateMixed = createBeside.result;
    results.load.pgliteTokenBesideCreate = tokenBeside;
    results.load.pgliteFetchBesideCreate = fetchBeside;
    log(`PGlite create beside token and fetch: ${short(createBeside.result)}`);
    log(`PGlite token beside creates (${beside.connections} connections): ${short(tokenBeside)}`);
    log(`PGlite fetch beside creates (${beside.connections} connections): ${short(fetchBeside)}`);
    // The send worker shares the one PGlite session: let it catch up before measuring reads.
    await sleep(3_000);
    results.load.pgliteFetch = await benchFetch(target, () => seededId('v', randomInt(verifyPool)), s);
    log(`PGlite fetch: ${short(results.load.pgliteFetch)}`);
    let next = 0;
    const pooled = () => (next < verifyPool ? { id: seededId('v', next++), otp: seedOtp } : null);
    results.load.pgliteVerify = await benchVerify(target, pooled, s);
    log(`PGlite verify: ${short(results.load.pgliteVerify)} (${next} of ${verifyPool} seeded verifications used)`);
    await child.stop();
  });
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping everything`);
    cleanUp(log).finally(() => process.exit(130));
  });
}

main()
  .catch(async (err: unknown) => {
    log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanUp(log);
    process.exitCode = 1;
  })
  .finally(() => {
    killAllChildren();
  });
