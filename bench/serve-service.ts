/**
 * The service under test, in its own process: startServer() with the settings from the environment, plus
 * one client with every scope. BENCH_SEED ("series:count,...") seeds PENDING verifications for that client
 * through the service's own database handle (the only way into PGlite, which allows one process). Prints one
 * JSON line {url, clientId, clientSecret} once it listens and has seeded (and made every country known to the client). BENCH_CPU_PROFILE (a file name) records
 * a V8 CPU profile from then until SIGTERM and writes it there.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { CompiledQuery } from 'kysely';
import { getCountries } from 'libphonenumber-js/max';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { knownScopes } from '../src/domain/scopes.js';
import { startServer } from '../src/server.js';
import { parseSeedList, seedQuery } from './lib/seed.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const server = await startServer(config, { logger: pino({ level: 'silent' }), print: () => undefined });
  const client = await server.services.clients.create('bench', knownScopes);
  const seeds = parseSeedList(process.env.BENCH_SEED);
  for (const { series, count } of seeds) {
    const { text, values } = seedQuery({ clientId: client.clientId, series, count });
    await server.services.db.db.executeQuery(CompiledQuery.raw(text, values));
  }
  // As bench/run.ts does after seeding PostgreSQL: the planner sees the seeded rows, and so picks their indexes.
  if (seeds.length > 0) await server.services.db.db.executeQuery(CompiledQuery.raw('VACUUM ANALYZE'));
  // The bench's client has had codes verified in every country, as a client serving users everywhere has: the
  // new-country limit (NEW_COUNTRY_LIMIT_COUNT) is looked up on every create but never applies.
  const now = new Date();
  await server.services.db.db
    .insertInto('client_countries')
    .values(getCountries().map((region) => ({ client_id: client.clientId, region_code: region, verified_at: now })))
    .execute();
  await server.services.conversion.refresh();
  const profile = await startProfile(process.env.BENCH_CPU_PROFILE);
  process.stdout.write(
    `${JSON.stringify({ url: server.url, clientId: client.clientId, clientSecret: client.clientSecret })}\n`,
  );
  const stop = async () => {
    await profile?.().catch((err: unknown) => process.stderr.write(`profile not written: ${String(err)}\n`));
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

/** Starts the V8 profiler when `file` is set; the returned function stops it and writes the profile. */
async function startProfile(file: string | undefined): Promise<(() => Promise<void>) | null> {
  if (!file) return null;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

main().catch((err: unknown) => {
  process.stderr.write(`serve-service failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
