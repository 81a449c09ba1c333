/**
 * `npm run bench:drop-in`: create and check through the Twilio-shaped /v2 against the same operations through /v1,
 * back to back in one run on one service (contract 15's target: /v2 at least 0.9x /v1). Prints a small table;
 * writes nothing (bench/results.json is npm run bench's). BENCH_CONNECTIONS, BENCH_SECONDS and
 * BENCH_WARMUP_SECONDS as in npm run bench; the embedded database (PGlite), as the service runs by default.
 */
import path from 'node:path';
import { startChild, stringFields } from './lib/child.js';
import { cleanUp, onCleanup, tempDir } from './lib/cleanup.js';
import { runLoad, warmUp, type LoadOptions, type LoadResult } from './lib/load.js';
import { PhoneSequence } from './lib/phones.js';
import { seededId, seedOtp } from './lib/seed.js';
import { benchCreate, benchVerify, fetchToken, type ServiceTarget } from './lib/service-scenarios.js';

const envInt = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`);
  return value;
};
const s = { connections: envInt('BENCH_CONNECTIONS', 50), seconds: envInt('BENCH_SECONDS', 10), warmUpSeconds: envInt('BENCH_WARMUP_SECONDS', 2) };
/** PENDING verifications seeded per check run, more than a run can use. */
const pool = envInt('BENCH_VERIFY_POOL', 100_000);

async function main(): Promise<void> {
  const dataDir = tempDir('drop-in');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'bench',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATA_DIR: path.join(dataDir, 'data'),
    CLIENT_RATE_LIMIT_PER_SECOND: '0',
    PHONE_LIMIT_COUNT: '1000000000',
    PREFIX_LIMIT_COUNT: '1000000000',
    MIN_CONVERSION_SAMPLE: '1000000000',
    PHONE_COOLDOWN_SECONDS: '0',
    OTP_TTL_SECONDS: '3600',
    DATABASE_POOL_SIZE: String(s.connections),
    BENCH_SEED: `a:${pool},b:${pool}`,
  };
  delete env.DATABASE_URL;
  const child = await startChild('serve-service.ts', env, (v) => stringFields(v, ['url', 'clientId', 'clientSecret']), 300_000);
  onCleanup(() => child.stop());
  const { url, clientId, clientSecret } = child.info;
  const target: ServiceTarget = { url, clientId, clientSecret, token: await fetchToken(url, clientId, clientSecret) };
  const hex = clientId.replace(/-/g, '');
  const basic = `Basic ${Buffer.from(`AC${hex}:${clientSecret}`).toString('base64')}`;
  const service = `/v2/Services/VA${hex}`;

  const measured = async (options: LoadOptions): Promise<LoadResult> => {
    if (s.warmUpSeconds > 0) await warmUp(options, s.warmUpSeconds);
    return runLoad(options);
  };
  const v2Create = (phones: PhoneSequence) =>
    measured({
      url,
      connections: s.connections,
      seconds: s.seconds,
      method: 'POST',
      path: `${service}/Verifications`,
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      setup: (req) => ({ ...req, body: new URLSearchParams({ To: `+234${phones.take().slice(1)}`, Channel: 'sms' }).toString() }),
    });
  const v2Check = (next: () => number) =>
    measured({
      url,
      connections: s.connections,
      seconds: s.seconds,
      method: 'POST',
      path: `${service}/VerificationCheck`,
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      setup: (req) => ({
        ...req,
        body: new URLSearchParams({ VerificationSid: `VE${seededId('b', next()).replace(/-/g, '')}`, Code: seedOtp }).toString(),
      }),
    });

  let a = 0;
  let b = 0;
  // Other work on a shared machine drifts over a run: the pairs are measured in BENCH_ROUNDS short rounds, the order
  // alternating from round to round (BENCH_V2_FIRST=1 starts with /v2), and the rounds summed.
  const rounds = envInt('BENCH_ROUNDS', 3);
  const v2First = process.env.BENCH_V2_FIRST === '1';
  const sum = (results: LoadResult[]): LoadResult => {
    const seconds = results.reduce((n, r) => n + r.seconds, 0);
    const responses = results.reduce((n, r) => n + r.responses, 0);
    const ok = results.reduce((n, r) => n + r.okRps * r.seconds, 0);
    const statuses: Record<string, number> = {};
    for (const r of results) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    return {
      rps: responses / seconds,
      okRps: ok / seconds,
      p50: Math.max(...results.map((r) => r.p50)),
      p99: Math.max(...results.map((r) => r.p99)),
      responses,
      statuses,
      errors: results.reduce((n, r) => n + r.errors, 0),
      seconds,
    };
  };
  const pairs = async (v1: () => Promise<LoadResult>, v2: () => Promise<LoadResult>): Promise<[LoadResult, LoadResult]> => {
    const a: LoadResult[] = [];
    const b: LoadResult[] = [];
    for (let i = 0; i < rounds; i++) {
      if ((i % 2 === 0) !== v2First) {
        a.push(await v1());
        b.push(await v2());
      } else {
        b.push(await v2());
        a.push(await v1());
      }
    }
    return [sum(a), sum(b)];
  };
  const v1Phones = new PhoneSequence(0);
  const v2Phones = new PhoneSequence(50_000_000);
  const [v1c, v2c] = await pairs(
    async () => (await benchCreate(target, v1Phones, s)).result,
    () => v2Create(v2Phones),
  );
  const [v1v, v2v] = await pairs(
    () => benchVerify(target, () => (a < pool ? { id: seededId('a', a++), otp: seedOtp } : null), s),
    () => v2Check(() => Math.min(b++, pool - 1)),
  );
  const row = (name: string, v1: LoadResult, v2: LoadResult) =>
    `| ${name} | ${v1.okRps.toFixed(0)} | ${v2.okRps.toFixed(0)} | ${(v2.okRps / v1.okRps).toFixed(2)}x | ${v1.p99} / ${v2.p99} | ${JSON.stringify(v2.statuses)} |`;
  process.stdout.write(
    [
      `${s.connections} connections, ${rounds} rounds of ${s.seconds} s per side, order alternating (${v2First ? '/v2' : '/v1'} first), PGlite, one process; p99: the worst round's`,
      '| operation | /v1 ok/s | /v2 ok/s | /v2 vs /v1 | p99 ms /v1 / /v2 | /v2 statuses |',
      '|---|---|---|---|---|---|',
      row('create', v1c, v2c),
      row('check', v1v, v2v),
      '',
    ].join('\n'),
  );
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanUp((text) => process.stderr.write(`${text}\n`)));
