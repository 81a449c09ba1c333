import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { knownScopes } from './domain/scopes.js';
import { systemClock, type Clock, type Random } from './domain/ports.js';
import { cryptoRandom } from './domain/random.js';
import { buildApp } from './http/app.js';
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

export async function startServer(config: Config, options: ServerOptions): Promise<RunningServer> {
  const { logger } = options;
  const services = await createServices(config, logger, options.clock ?? systemClock, options.random ?? cryptoRandom);
  const closers: (() => Promise<void>)[] = [() => services.db.close()];
  try {
    if (services.db.kind === 'pglite') {
      logger.warn(
        { dataDir: config.DATA_DIR },
        'using the embedded database (PGlite): it is for a single machine and a single process; set DATABASE_URL to use PostgreSQL',
      );
      await createDevelopmentClient(services, options.print ?? ((t) => process.stdout.write(t)));
    }
    if (services.db.kind === 'pglite' && config.adminSocketPath) {
      const admin = await serveAdminSocket(config.adminSocketPath, async (input) => {
        const command = parseAdminCommand(input);
        return typeof command === 'string' ? { ok: false, error: command } : runAdminCommand(services, command);
      });
      closers.unshift(admin.close);
    }
    const workers = new Workers(services);
    const app = await buildApp({
      logger,
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
    });
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
