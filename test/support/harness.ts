import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import type { Random } from '../../src/domain/ports.js';
import { cryptoRandom } from '../../src/domain/random.js';
import type { Scope } from '../../src/domain/scopes.js';
import { buildApp } from '../../src/http/app.js';
import { appDeps } from '../../src/server.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import type { LookupAll } from '../../src/webhooks/address-guard.js';
import { createServices, type Services } from '../../src/services.js';
import { TestClock } from './clock.js';
import { inMemoryDataDir } from '../../src/store/database.js';
import { freshDatabase, reusableEmbedded, type DbKind, type TestDatabase } from './databases.js';

/** The service wired on a fresh database with a test clock, its app ready for inject(). */
export interface Harness {
  readonly kind: DbKind;
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly config: Config;
  readonly clock: TestClock;
  /** Registers a client with these scopes. */
  client(scopes?: readonly Scope[]): Promise<ClientCredentials>;
  /** A bearer token for a new client (or the given one) with these scopes. */
  token(scopes?: readonly Scope[], client?: ClientCredentials): Promise<string>;
  /** inject() with a bearer token and a JSON body. */
  call(method: 'GET' | 'POST' | 'DELETE', url: string, token: string | null, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Pushes the shared counters to the database, as the background task does every 100 ms. */
  flushCounters(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly env?: Record<string, string>;
  readonly random?: Random;
  /**
   * Leave committed work due in the queues for the workers to claim (tests then run them by hand). By default,
   * as in the server, this process's workers take what it commits: codes are sent and webhooks delivered at once.
   */
  readonly queuePath?: boolean;
  /** The clock to run on (webhook tests start it at the real time: receivers check signature timestamps). */
  readonly clock?: TestClock;
  /** How webhook destinations' names resolve (there is no DNS to rely on). */
  readonly webhookLookup?: LookupAll;
}

export const allScopes: readonly Scope[] = ['otp:send', 'otp:verify'];

export async function createHarness(kind: DbKind, options: HarnessOptions = {}): Promise<Harness> {
  const database: TestDatabase = await freshDatabase(kind);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    CLIENT_RATE_LIMIT_PER_SECOND: '0',
    // Tests reach the app from this machine only, as a developer's server bound to loopback is reached.
    HOST: '127.0.0.1',
    ...database.env,
    ...options.env,
  });
  const clock = options.clock ?? new TestClock();
  // TEST_LOG_LEVEL=error shows what a test's server logged (say, the error behind a 500).
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  // In memory (no DATA_DIR given): a database this process used before, emptied, rather than a new PGlite.
  const embedded = config.DATABASE_URL === undefined && config.DATA_DIR === inMemoryDataDir;
  const db = embedded ? await reusableEmbedded(config.DATABASE_TIMEOUT_MS) : undefined;
  const services = await createServices(config, logger, clock, options.random ?? cryptoRandom, { ...(db && { db }), ...(options.webhookLookup && { webhookLookup: options.webhookLookup }) });
  // The workers' polling tasks are not started (tests drive them by hand), but what commits is started at once.
  if (!options.queuePath) services.dispatcher.connect({ sends: services.sendWorker, events: services.webhookWorker });
  const app = await buildApp(appDeps(services));
  const client = (scopes: readonly Scope[] = allScopes) => services.clients.create('test client', scopes);
  const harness: Harness = {
    kind,
    app,
    services,
    config,
    clock,
    client,
    async token(scopes = allScopes, existing) {
      const c = existing ?? (await client(scopes));
      const res = await app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret, scope: scopes.join(' ') },
      });
      if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`);
      return (res.json() as { accessToken: string }).accessToken;
    },
    call(method, url, token, body, headers = {}) {
      return app.inject({
        method,
        url,
        headers: { ...(token && { authorization: `Bearer ${token}` }), ...headers },
        ...(body !== undefined && { payload: body as object }),
      });
    },
    async flushCounters() {
      await services.authFailures.flush();
    },
    async close() {
      await app.close();
      services.dispatcher.disconnect();
      await services.sendWorker.stop();
      await services.webhookWorker.close();
      await services.providers.stop();
      await services.db.close();
      await database.drop();
    },
  };
  return harness;
}
