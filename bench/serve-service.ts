/**
 * The service under test, in its own process: startServer() with the settings from the environment, plus
 * one client with every scope. BENCH_SEED ("series:count,...") seeds PENDING verifications for that client
 * through the service's own database handle (the only way into PGlite, which allows one process). Prints one
 * JSON line {url, clientId, clientSecret} once it listens and has seeded.
 */
import { CompiledQuery } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { knownScopes } from '../src/domain/scopes.js';
import { startServer } from '../src/server.js';
import { parseSeedList, seedQuery } from './lib/seed.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const server = await startServer(config, { logger: pino({ level: 'silent' }), print: () => undefined });
  const client = await server.services.clients.create('bench', knownScopes);
  for (const { series, count } of parseSeedList(process.env.BENCH_SEED)) {
    const { text, values } = seedQuery({ clientId: client.clientId, series, count });
    await server.services.db.db.executeQuery(CompiledQuery.raw(text, values));
  }
  process.stdout.write(
    `${JSON.stringify({ url: server.url, clientId: client.clientId, clientSecret: client.clientSecret })}\n`,
  );
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`serve-service failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
