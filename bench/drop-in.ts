/**
 * `npm run bench:drop-in`: create and check through the Twilio-shaped /v2 against the same operations through /v1,
 * back to back in one run on one service (contract 15's target: /v2 at least 0.9x /v1). Prints a small table;
 * writes nothing (bench/results.json is npm run bench's). BENCH_CONNECTIONS, BENCH_SECONDS and
 * BENCH_WARMUP_SECONDS as in npm run bench; the embedded database (PGlite), as the service runs by default.
 */
import os from 'node:os';
import path from 'node:path';
import { startChild, stringFields } from './lib/child.js';
import { cleanUp, onCleanup, tempDir } from './lib/cleanup.js';
import { benchDropIn, dropInTable } from './lib/drop-in-scenario.js';
import { fetchToken, type ServiceTarget } from './lib/service-scenarios.js';

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
    MIN_CONVERSION_SHORT_SAMPLE: '1000000000',
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
  const rounds = envInt('BENCH_ROUNDS', 3);
  const v2First = process.env.BENCH_V2_FIRST === '1';
  const results = await benchDropIn(target, { ...s, rounds, v2First, pool, v1PhoneOffset: 0, v2PhoneOffset: 50_000_000 });
  process.stdout.write(
    dropInTable(
      results,
      `${s.connections} connections, ${rounds} rounds of ${s.seconds} s per side, order alternating (${v2First ? '/v2' : '/v1'} first), PGlite, one process; ` +
        `p99: the worst round's; 1-min load average at the end ${os.loadavg()[0]?.toFixed(2)}`,
    ),
  );
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanUp((text) => process.stderr.write(`${text}\n`)));
