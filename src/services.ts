import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Clock, Random } from './domain/ports.js';
import { parseE164 } from './domain/phone.js';
import { VerificationService } from './domain/verification-service.js';
import { WindowCounter } from './domain/window-counter.js';
import { ClientDirectory } from './oauth/client-directory.js';
import { ClientService } from './oauth/client-service.js';
import { TokenEndpoint } from './oauth/token-endpoint.js';
import { TokenService } from './oauth/token-service.js';
import { pickCallerId } from './providers/caller-id.js';
import { LogCallPlacer, LogSmsSender } from './providers/log-providers.js';
import { SqlClientStore } from './store/client-store.js';
import { openDatabase, type Db } from './store/database.js';
import { SqlMessageStore } from './store/message-store.js';
import { SqlCounterStore } from './store/rate-counter-store.js';
import { SqlSendJobStore } from './store/send-job-store.js';
import { SqlSigningKeyStore } from './store/signing-key-store.js';
import { SqlVerificationStore } from './store/verification-store.js';
import { SendWorker, sendLeaseMs } from './jobs/send-worker.js';
import { SqlWebhookStore } from './store/webhook-store.js';
import { DeliveryWorker } from './webhooks/delivery-worker.js';
import { GuardedHttpClient } from './webhooks/guarded-client.js';

/** How long an Idempotency-Key is remembered (contract 3.1). */
export const idempotencySeconds = 24 * 60 * 60;

/** Everything the server, the workers and the CLI share, wired once. */
export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly random: Random;
  readonly db: Db;
  readonly clients: ClientService;
  readonly clientDirectory: ClientDirectory;
  readonly tokens: TokenService;
  readonly tokenEndpoint: TokenEndpoint;
  readonly verifications: VerificationService;
  readonly verificationStore: SqlVerificationStore;
  readonly messages: SqlMessageStore;
  readonly counters: SqlCounterStore;
  readonly clientRate: WindowCounter;
  readonly authFailures: WindowCounter;
  readonly sendWorker: SendWorker;
  /** The webhook outbox: delivery log and operator replay. */
  readonly webhooks: SqlWebhookStore;
  /** Delivers outbox events; run by Workers (the server, or `otp-service worker`). */
  readonly webhookWorker: DeliveryWorker;
  /** Hooks the workers set so that a commit wakes them at once. */
  readonly wake: { send: () => void; webhooks: () => void };
}

export interface ServiceOptions {
  /** Tests only: start an in-memory embedded database from this dump. */
  readonly pgliteDump?: Blob;
  /**
   * Send a new verification's code from the creating process right after the commit (default). Off, the
   * send job is left due for the send worker's next run (tests drive that run by hand).
   */
  readonly sendOnCommit?: boolean;
  /**
   * Deliver a verify's webhook from this process right after the commit, the event written claimed by it
   * (default: when WEBHOOK_WORKER is on). Off, delivery waits for a worker to claim the event.
   */
  readonly deliverOnCommit?: boolean;
}

export async function createServices(
  config: Config,
  logger: Logger,
  clock: Clock,
  random: Random,
  options: ServiceOptions = {},
): Promise<Services> {
  const { pgliteDump } = options;
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolSize: config.DATABASE_POOL_SIZE,
    ...(pgliteDump && { pgliteDump }),
  });
  const wake = { send: () => undefined, webhooks: () => undefined } as Services['wake'];
  const now = () => clock.now().getTime();
  const clientStore = new SqlClientStore(db.db);
  const clientDirectory = new ClientDirectory(clientStore, now);
  const clients = new ClientService(clientStore, clock, random, (id) => clientDirectory.forget(id));
  const tokens = await TokenService.create(
    new SqlSigningKeyStore(db.db),
    config.TOKEN_TTL_SECONDS,
    clientDirectory,
    clock,
    random,
  );
  const counters = new SqlCounterStore(db.db);
  const authFailures = new WindowCounter(counters, 60_000, now);
  const clientRate = new WindowCounter(counters, 1_000, now);
  const tokenEndpoint = new TokenEndpoint(clientDirectory, tokens, authFailures, config.AUTH_FAILURE_LIMIT);

  const smsSender = parseE164(config.SMS_SENDER_NUMBER);
  if (!smsSender) throw new Error(`SMS_SENDER_NUMBER "${config.SMS_SENDER_NUMBER}" is not a valid E.164 number`);
  // On PostgreSQL each event commit also NOTIFYs, so that workers in other processes start at once.
  const notifyOtherProcesses = db.kind === 'postgres';
  const deliverOnCommit = options.deliverOnCommit ?? config.WEBHOOK_WORKER;
  const verificationStore = new SqlVerificationStore(db.db, {
    onEventsDue: () => wake.webhooks(),
    notifyOtherProcesses,
    ...(deliverOnCommit && {
      deliverOnCommit: { leaseMs: config.WEBHOOK_LEASE_MS, deliver: (events) => webhookWorker.deliverNow(events) },
    }),
  });
  const verifications = new VerificationService(
    verificationStore,
    {
      ttlSeconds: config.OTP_TTL_SECONDS,
      codeLength: config.OTP_LENGTH,
      maxAttempts: config.OTP_MAX_ATTEMPTS,
      phoneLimit: {
        count: config.PHONE_LIMIT_COUNT,
        windowSeconds: config.PHONE_LIMIT_WINDOW_SECONDS,
        cooldownSeconds: config.PHONE_COOLDOWN_SECONDS,
      },
      idempotencySeconds,
    },
    { smsSender, pickCallerId: (r) => pickCallerId(config.CALLER_ID_RANGES, r) },
    clock,
    random,
    options.sendOnCommit === false
      ? () => wake.send()
      : { claimSeconds: sendLeaseMs / 1000, start: (v, sender) => sendWorker.sendNow(v, sender) },
  );
  const messages = new SqlMessageStore(db.db, clock);
  const providerLog = logger.child({ component: 'provider' });
  const sendWorker = new SendWorker({
    jobs: new SqlSendJobStore(db.db),
    verifications: verificationStore,
    service: verifications,
    sms: new LogSmsSender(messages, providerLog),
    calls: new LogCallPlacer(messages, providerLog),
    retryDelays: config.SEND_RETRY_DELAYS,
    clock,
    logger: logger.child({ component: 'send-worker' }),
  });
  const webhooks = new SqlWebhookStore(db.db, notifyOtherProcesses);
  const webhookWorker = new DeliveryWorker({
    outbox: webhooks,
    http: new GuardedHttpClient({
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    }),
    retryDelays: config.WEBHOOK_RETRY_DELAYS,
    leaseMs: config.WEBHOOK_LEASE_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    clock,
    random,
    logger: logger.child({ component: 'webhooks' }),
    onSlotFree: () => wake.webhooks(),
    secretsOf: async (clientId) => {
      const c = await clientDirectory.get(clientId);
      return c
        ? { current: c.webhookSecret, previous: c.previousWebhookSecret, previousExpiresAt: c.previousWebhookSecretExpiresAt }
        : null;
    },
  });
  return {
    config,
    logger,
    clock,
    random,
    db,
    clients,
    clientDirectory,
    tokens,
    tokenEndpoint,
    verifications,
    verificationStore,
    messages,
    counters,
    clientRate,
    authFailures,
    sendWorker,
    webhooks,
    webhookWorker,
    wake,
  };
}
