import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { knownScopes } from './domain/scopes.js';
import { systemClock, type Clock, type Random } from './domain/ports.js';
import { cryptoRandom } from './domain/random.js';
import { buildApp, type AppDeps } from './http/app.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { Workers } from './jobs/workers.js';
import { createServices, type Services } from './services.js';
import { parseAdminCommand, runAdminCommand } from './cli/admin-commands.js';
import { serveAdminSocket } from './cli/admin-socket.js';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly services: Services;
  /** Base URL the server listens on, e.g. http://127.0.0.1:3000. */
  readonly url: string;
  /** Stops taking requests, lets in-flight ones finish, stops the workers, closes the database. */
  close(): Promise<void>;
}

export interface ServerOptions {
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly random?: Random;
  /** Where the one-time development credentials are printed (stdout by default; never the log). */
  readonly print?: (text: string) => void;
}

/** What the HTTP app needs, from the wired services (the server's and the tests' one way to build it). */
export function appDeps(services: Services): AppDeps {
  const { config } = services;
  return {
    logger: services.logger,
    verifications: services.verifications,
    tokens: services.tokens,
    tokenEndpoint: services.tokenEndpoint,
    clientRate:
      config.CLIENT_RATE_LIMIT_PER_SECOND > 0
        ? { counter: services.clientRate, perSecond: config.CLIENT_RATE_LIMIT_PER_SECOND }
        : null,
    publicBaseUrl: config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? null,
    ready: () => services.db.ping(),
    trustProxy: config.TRUST_PROXY,
    extraV1Routes: (v1) =>
      webhookRoutes(v1, {
        verifications: services.verifications,
        deliveries: services.webhooks,
        now: () => services.clock.now(),
      }),
  };
}

export async function startServer(config: Config, options: ServerOptions): Promise<RunningServer> {
  const { logger } = options;
  const services = await createServices(config, logger, options.clock ?? systemClock, options.random ?? cryptoRandom);
  const closers: (() => Promise<void>)[] = [() => services.db.close()];
  try {
    await prepareEmbedded(services, closers);
    if (services.db.kind === 'pglite') {
      await createDevelopmentClient(services, options.print ?? ((t) => process.stdout.write(t)));
    }
    const workers = new Workers(services);
    const app = await buildApp(appDeps(services));
    closers.unshift(() => workers.stop());
    await app.listen({ port: config.PORT, host: config.HOST });
    workers.start();
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
    return {
      app,
      services,
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      close: async () => {
        const grace = setTimeout(() => app.server.closeAllConnections(), config.SHUTDOWN_GRACE_MS);
        await app.close();
        clearTimeout(grace);
        for (const close of closers) await close();
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => undefined);
    throw err;
  }
}

/** A process that runs only the background workers (`otp-service worker`): no HTTP. */
export interface RunningWorkers {
  readonly services: Services;
  close(): Promise<void>;
}

/**
 * Starts the workers, webhook delivery included whatever WEBHOOK_WORKER says. With PostgreSQL any number of
 * these may run beside the servers; the embedded database admits one process, so there it stands in for the
 * server (and answers the CLI on the admin socket).
 */
export async function startWorkers(config: Config, options: ServerOptions): Promise<RunningWorkers> {
  const { logger } = options;
  const services = await createServices(config, logger, options.clock ?? systemClock, options.random ?? cryptoRandom);
  const closers: (() => Promise<void>)[] = [() => services.db.close()];
  try {
    await prepareEmbedded(services, closers);
    const workers = new Workers(services, { webhooks: true });
    closers.unshift(() => workers.stop());
    workers.start();
    return {
      services,
      close: async () => {
        for (const close of closers) await close();
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => undefined);
    throw err;
  }
}

/** On the embedded database: the one-process warning, and the admin socket the CLI talks to meanwhile. */
async function prepareEmbedded(services: Services, closers: (() => Promise<void>)[]): Promise<void> {
  const { config, logger } = services;
  if (services.db.kind !== 'pglite') return;
  logger.warn(
    { dataDir: config.DATA_DIR },
    'using the embedded database (PGlite): it is for a single machine and a single process; set DATABASE_URL to use PostgreSQL',
  );
  if (!config.adminSocketPath) return;
  const admin = await serveAdminSocket(config.adminSocketPath, async (input) => {
    const command = parseAdminCommand(input);
    return typeof command === 'string' ? { ok: false, error: command } : runAdminCommand(services, command);
  });
  closers.unshift(admin.close);
}

/** On the embedded database's first start, a client to call the API with at once. */
async function createDevelopmentClient(services: Services, print: (text: string) => void): Promise<void> {
  if ((await services.clients.count()) > 0) return;
  const c = await services.clients.create('development', knownScopes);
  print(
    [
      '',
      'Created a development client (shown once; this is the only time the secret is printed):',
      `  client_id:      ${c.clientId}`,
      `  client_secret:  ${c.clientSecret}`,
      `  webhook secret: ${c.webhookSecret}`,
      `  scopes:         ${c.scopes.join(' ')}`,
      '',
    ].join('\n') + '\n',
  );
}
