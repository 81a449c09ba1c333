import type { Verification } from './domain/verification.js';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { channels } from './domain/channel-driver.js';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { knownScopes } from './domain/scopes.js';
import { channels as allChannels } from './domain/channel-driver.js';
import { systemClock, type Clock, type Random } from './domain/ports.js';
import { cryptoRandom } from './domain/random.js';
import { parseAdminCommand } from './admin/commands.js';
import { adminDeps } from './admin/deps.js';
import { runAudited } from './admin/audited.js';
import type { ConsoleRouteDeps } from './console/http/routes.js';
import { Passkeys } from './console/passkeys.js';
import { SqlPasskeyStore } from './store/passkey-store.js';
import { providerTraffic } from './store/stats-store.js';
import { claimAdminSocket, type AdminSocket } from './admin/socket.js';
import { buildApp, type AppDeps } from './http/app.js';
import { inboxHosts } from './http/dev-inbox-hosts.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { webhookDestinations } from './webhooks/destination-policy.js';
import { housekeeping } from './jobs/housekeeping.js';
import { addressCountriesOf } from './metadata/address-country.js';
import { Workers, type WorkerDeps } from './jobs/workers.js';
import { createServices, devInboxLimit, type Services } from './services.js';
import { vacuumEmbedded } from './store/embedded-vacuum.js';
import { clientsChannel } from './store/client-store.js';
import { numberListsChannel } from './store/number-list-store.js';
import { routesChannel } from './store/route-store.js';
import { pricesChannel } from './store/price-store.js';
import { webhookChannel } from './store/outbox-rows.js';
import { pruneHistory } from './store/retention.js';
import { ruleModesChannel } from './store/rule-mode-store.js';

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

/** What the HTTP app uses (the server's and the tests' one way to build it). */
export function appDeps(services: Services): AppDeps {
  const { config } = services;
  return {
    logger: services.logger,
    verifications: services.verifications,
    silent: services.silent,
    ...(config.providers.silent[0]?.module.name === 'camara' &&
      config.PUBLIC_BASE_URL !== undefined && { silentCheckUrl: silentCheckUrlOf(config.PUBLIC_BASE_URL) }),
    codeLength: config.OTP_LENGTH,
    costCurrency: config.COST_CURRENCY,
    webhookDestinations: webhookDestinations(config),
    personalData: services.personalData,
    lookups: services.lookups,
    stats: services.stats,
    tokens: services.tokens,
    tokenEndpoint: services.tokenEndpoint,
    clientRate: services.clientRate,
    publicBaseUrl: config.PUBLIC_BASE_URL ?? null,
    ready: () => services.db.ping(),
    metrics: services.metrics,
    trustProxy: config.TRUST_PROXY,
    limits: {
      headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: config.MAX_CONNECTIONS,
    },
    callbacks: {
      publicBaseUrl: config.PUBLIC_BASE_URL ?? null,
      provider: (name) => services.providers.named(name),
      // A receipt that overtook the commit of its send's acceptance in this process waits for that commit.
      recordReceipt: async (provider, receipt, account) => {
        await services.sendWorker.recorded(provider, account, receipt.messageId);
        return services.deliveries.recordReceipt(provider, receipt, account);
      },
    },
    twilio: {
      verifications: services.verifications,
      clients: services.clientDirectory,
      authFailures: services.authFailures,
      maxAuthFailures: config.AUTH_FAILURE_LIMIT,
      clientRate: services.clientRate,
      publicBaseUrl: config.PUBLIC_BASE_URL ?? null,
      requestTypeNamed: (name) => services.channels.requestTypeNamed(name),
      codeLength: config.OTP_LENGTH,
    },
    relays: { verifications: services.verifications, clients: services.clientDirectory, clock: services.clock, requests: services.relayRequests },
    ...(services.inboxFeed && {
      devInbox: {
        feed: services.inboxFeed,
        limit: devInboxLimit,
        maxStreams: 32,
        heartbeatMs: 15_000,
        hosts: inboxHosts(config.PUBLIC_BASE_URL ?? null, config.listenHost),
      },
    }),
    ...(config.CONSOLE && { console: consoleDeps(services) }),
    extraV1Routes: (v1) =>
      webhookRoutes(v1, {
        verifications: services.verifications,
        deliveries: services.webhooks,
        now: () => services.clock.now(),
      }),
  };
}

/** What the console uses (contract 16): the operator commands, run as the CLI runs them, and its sign-in's parts. */
export function consoleDeps(services: Services): ConsoleRouteDeps {
  const { config } = services;
  const admin = adminDeps(services);
  const origin = config.consoleOrigin;
  return {
    operators: services.operators,
    passkeys: new Passkeys(new SqlPasskeyStore(services.db.db), services.clock),
    audit: services.audit,
    clock: services.clock,
    failures: services.authFailures,
    maxFailures: config.AUTH_FAILURE_LIMIT,
    origin,
    secureCookies: config.NODE_ENV !== 'development' || (origin?.startsWith('https://') ?? false),
    costCurrency: config.COST_CURRENCY,
    run: async (actor, input) => {
      const command = parseAdminCommand(input);
      return typeof command === 'string' ? command : runAudited(admin, actor, command);
    },
  };
}

/** What the background workers use; webhook delivery only when this process delivers webhooks. */
export function workerDeps(services: Services, deliverWebhooks: boolean): WorkerDeps {
  const { config, db } = services;
  return {
    logger: services.logger,
    dispatcher: services.dispatcher,
    providers: services.providers,
    sendWorker: services.sendWorker,
    webhookWorker: deliverWebhooks ? services.webhookWorker : null,
    expireDue: (limit) => services.verifications.expireDue(limit),
    takeDueSteps: (limit) => services.deliveries.takeDueSteps(limit),
    takeDueFailovers: (limit) => services.deliveries.takeDueFailovers(limit),
    watchConversion: () => services.conversion.refresh(),
    readRouteFigures: () => services.bestShares.refresh(),
    applyParkedReceipts: () => services.deliveries.applyParkedReceipts(100),
    flushCounters: async () => {
      await services.authFailures.flush();
    },
    housekeeping: () =>
      housekeeping({
        counters: services.counters,
        idempotencyKeys: services.verificationStore,
        captchaTokens: services.captchaTokens,
        relayRequests: services.relayRequests,
        history: (before, batch) => pruneHistory(db.db, before, batch),
        clock: services.clock,
        retentionDays: config.RETENTION_DAYS,
        verificationRetentionDays: config.VERIFICATION_RETENTION_DAYS,
        eraseVerifications: async (before, limit) => (await services.personalData.erase({ kind: 'older', before, limit })).verifications,
        budgetHolds: services.spend,
      }),
    notifications: db.pool ? { pool: db.pool, channel: webhookChannel } : null,
    clientChanges: {
      channel: clientsChannel,
      forget: (id) => {
        if (id === null) services.clientDirectory.forgetAll();
        else services.clientDirectory.forget(id);
        // Another instance's change may have set or removed a budget (SpendStore.kept).
        services.spend.refreshKept().catch(() => undefined);
      },
    },
    followed: [
      { name: 'lists', channel: numberListsChannel, refresh: () => services.listsInForce.refresh() },
      { name: 'rules', channel: ruleModesChannel, refresh: () => services.ruleModesInForce.refresh() },
      {
        name: 'routes',
        channel: routesChannel,
        refresh: async () => {
          await services.routesInForce.refresh();
          await services.bestShares.refresh();
        },
      },
      { name: 'prices', channel: pricesChannel, refresh: () => services.pricesInForce.refresh() },
    ],
    embeddedVacuum: db.kind === 'pglite' ? () => vacuumEmbedded(db.db) : null,
  };
}


export async function startServer(config: Config, options: ServerOptions): Promise<RunningServer> {
  const { logger } = options;
  const admin = await claimEmbeddedAdminSocket(config);
  const services = await createServicesOrRelease(config, options, admin);
  const closers: (() => Promise<void>)[] = [() => services.db.close()];
  if (admin) closers.unshift(admin.close);
  try {
    if (config.NODE_ENV === 'production' && config.PUBLIC_BASE_URL === undefined) {
      logger.warn(
        'PUBLIC_BASE_URL is unset in production: the OAuth metadata names the host each caller sends; set it to the external URL of the service',
      );
    }
    if (config.NODE_ENV === 'production' && config.IP_COUNTRY_DATABASE === 'shipped') {
      logger.warn(
        { builtAt: addressCountriesOf('shipped')?.builtAt.toISOString() },
        "IP_COUNTRY_DATABASE=shipped in production: the IP-to-country data that came with the service is a snapshot; point IP_COUNTRY_DATABASE at a current MaxMind-format country database (docs/fraud.md, 'Where the user is')",
      );
    }
    prepareEmbedded(services, admin);
    if (services.db.kind === 'pglite' && config.NODE_ENV !== 'production') {
      await createDevelopmentClient(services, options.print ?? ((t) => process.stdout.write(t)));
    } else if ((await services.clients.count()) === 0) {
      logger.warn(
        { command: 'otp-service clients create --name NAME --scopes "otp:send otp:verify"' },
        'no client yet: create the first one with this command, run with the same DATABASE_URL (or DATA_DIR); it prints the client id and secret once',
      );
    }
    const deliverWebhooks = config.WEBHOOK_WORKER;
    if (!deliverWebhooks && services.db.kind === 'pglite') {
      logger.warn('WEBHOOK_WORKER=false on the embedded database: no process delivers webhooks');
    }
    const workers = new Workers(workerDeps(services, deliverWebhooks));
    const app = await buildApp(appDeps(services));
    closers.unshift(() => workers.stop());
    await workers.start();
    await app.listen({ port: config.PORT, host: config.listenHost });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const host = config.listenHost === '0.0.0.0' || config.listenHost === '::' ? '127.0.0.1' : config.listenHost;
    return {
      app,
      services,
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      close: async () => {
        // Requests get most of the grace; the rest is the workers' and providers' (main.ts ends it all at the grace).
        const grace = setTimeout(() => app.server.closeAllConnections(), requestShareOfGrace(config.SHUTDOWN_GRACE_MS));
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

/** The part of SHUTDOWN_GRACE_MS requests in flight may take: all but a fifth, at most 2 s, left to the workers. */
export function requestShareOfGrace(graceMs: number): number {
  return graceMs - Math.min(2_000, Math.floor(graceMs / 5));
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
  const admin = await claimEmbeddedAdminSocket(config);
  const services = await createServicesOrRelease(config, options, admin);
  const closers: (() => Promise<void>)[] = [() => services.db.close()];
  if (admin) closers.unshift(admin.close);
  try {
    prepareEmbedded(services, admin);
    const workers = new Workers(workerDeps(services, true));
    closers.unshift(() => workers.stop());
    await workers.start();
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

/**
 * On the embedded database, the admin socket, claimed before anything else: it is how a second server on the
 * same DATA_DIR learns that one runs, and it must learn that before it opens the database (see claimAdminSocket).
 */
function claimEmbeddedAdminSocket(config: Config): Promise<AdminSocket | null> {
  return config.DATABASE_URL === undefined && config.adminSocketPath ? claimAdminSocket(config.adminSocketPath) : Promise.resolve(null);
}

/** createServices (database opened and migrated); if that fails, the admin socket is let go. */
async function createServicesOrRelease(config: Config, options: ServerOptions, admin: AdminSocket | null): Promise<Services> {
  try {
    return await createServices(config, options.logger, options.clock ?? systemClock, options.random ?? cryptoRandom);
  } catch (err) {
    await admin?.close();
    throw err;
  }
}

/**
 * Said at every start (contract 8): with the `log` provider nothing leaves the machine. Then, on the embedded
 * database: the one-process warning, and the admin socket starts answering the CLI.
 */
function prepareEmbedded(services: Services, admin: AdminSocket | null): void {
  const { config, logger } = services;
  const logged = allChannels.filter((c) => config.providers[c].some((p) => p.module.name === 'log'));
  if (logged.length > 0) {
    logger.warn(
      { channels: logged },
      'the log provider is configured: its codes are stored in the database and logged with the code hidden; nothing leaves this machine (development only)',
    );
  }
  if (services.db.kind !== 'pglite') return;
  logger.warn(
    { dataDir: config.DATA_DIR },
    'using the embedded database (PGlite): it is for a single machine and a single process; set DATABASE_URL to use PostgreSQL',
  );
  if (!admin) return;
  const deps = adminDeps(services);
  admin.serve(async (input) => {
    const command = parseAdminCommand(input);
    return typeof command === 'string' ? { ok: false, error: command } : runAudited(deps, 'cli', command);
  });
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

/** A SILENT verification's check URL under SILENT_PROVIDER=camara: where its device begins (src/http/routes/silent-camara.ts). */
function silentCheckUrlOf(publicBaseUrl: string): (v: Verification) => string | null {
  return (v) => (v.type === 'SILENT' ? `${publicBaseUrl}/silent/camara/${v.id}` : null);
}
