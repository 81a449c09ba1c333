import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { callTimeoutMs, providerNames, signalPolicy, type Config } from './config.js';
import type { Clock, Random } from './domain/ports.js';
import { parseE164 } from './domain/phone.js';
import { DeliveryService } from './domain/delivery-service.js';
import { LookupService } from './domain/lookup-service.js';
import { StatsService } from './domain/stats-service.js';
import { VerificationService } from './domain/verification-service.js';
import { QuotaLimiter } from './domain/quota-limiter.js';
import { dayMs } from './domain/daily-quota.js';
import { hourMs } from './domain/new-country.js';
import { WindowCounter } from './domain/window-counter.js';
import { ChannelRegistry } from './channels/registry.js';
import { SilentService } from './domain/silent-service.js';
import { CamaraNumberVerification, CamaraSilentProvider } from './providers/silent/camara.js';
import { FirebasePnvProvider } from './providers/silent/firebase.js';
import { channelOfDelivery, channels as allChannels, perChannel, type Channel } from './domain/channel-driver.js';
import type { AfterCommit } from './domain/after-commit.js';
import { defaultClientSettings, type ClientSettings } from './domain/client-settings.js';
import { CommitDispatcher } from './jobs/after-commit.js';
import { MessageRevoker } from './jobs/message-revoker.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { CircuitBreaker } from './jobs/circuit-breaker.js';
import { SendWorker } from './jobs/send-worker.js';
import { GoogleNumberMetadata } from './metadata/google-number-metadata.js';
import { InboxFeed } from './inbox/inbox-feed.js';
import { ClientDirectory } from './oauth/client-directory.js';
import { ClientService } from './oauth/client-service.js';
import { TokenEndpoint } from './oauth/token-endpoint.js';
import { TokenService } from './oauth/token-service.js';
import type { LoggedMessage } from './channels/provider-port.js';
import { loggedMessage } from './providers/log.js';
import { Providers } from './providers/registry.js';
import { SqlClientStore } from './store/client-store.js';
import { openDatabase, type Db } from './store/database.js';
import { SqlLookupStore } from './store/lookup-store.js';
import { SqlInboxStore } from './store/inbox-store.js';
import { SqlPrefixBlockStore } from './store/prefix-block-store.js';
import { SqlConversionStore } from './store/conversion-store.js';
import { SqlNumberListStore } from './store/number-list-store.js';
import { SqlRouteStore } from './store/route-store.js';
import { RouteTable, type Destination, type Route } from './domain/routes.js';
import { RuleModes, type RuleModeEntry } from './domain/risk.js';
import { SqlRuleModeStore } from './store/rule-mode-store.js';
import { SqlRiskStore } from './store/risk-store.js';
import { RefusalRecorder } from './domain/verdicts.js';
import { maxDecisionTimeoutMs } from './domain/decision.js';
import { DecisionWebhookClient } from './webhooks/decision-client.js';
import { configuredCarrierChecks } from './carrier/carrier-settings.js';
import { InForce } from './domain/in-force.js';
import { costOf, PriceTable, type Price } from './domain/prices.js';
import { SpendStore } from './store/spend-store.js';
import { SqlRouteFigures } from './store/route-figures-store.js';
import { BestShares } from './domain/route-policy.js';
import { SqlPriceStore } from './store/price-store.js';
import { SqlCaptchaTokenStore } from './store/captcha-token-store.js';
import { SiteVerify } from './captcha/siteverify.js';
import { addressCountriesOf } from './metadata/address-country.js';
import { NumberLists, type ListEntry } from './domain/number-lists.js';
import { ConversionWatch } from './domain/conversion-watch.js';
import { conversionWindowSeconds } from './domain/conversion.js';
import { SqlMessageStore } from './store/message-store.js';
import { SqlCounterStore } from './store/rate-counter-store.js';
import { DailySendStore } from './store/daily-send-store.js';
import { SqlSendJobStore } from './store/send-job-store.js';
import { SqlSigningKeyStore } from './store/signing-key-store.js';
import { SqlStatsStore } from './store/stats-store.js';
import { SqlVerificationStore } from './store/verification-store.js';
import { SqlWebhookStore } from './store/webhook-store.js';
import { DeliveryWorker } from './webhooks/delivery-worker.js';
import { GuardedHttpClient } from './webhooks/guarded-client.js';
import type { LookupAll } from './webhooks/address-guard.js';
import type { PersonalDataStore } from './domain/personal-data.js';
import { SqlPersonalDataStore } from './store/personal-data-store.js';
import { SqlRelayRequestStore } from './store/relay-request-store.js';
import type { RelayRequests } from './domain/relay-requests.js';
import { OperatorService } from './console/operator-service.js';
import { consoleSessionPolicy } from './console/session-policy.js';
import type { AuditLog } from './console/audit-log.js';
import { SqlAuditLog } from './store/audit-store.js';
import { SqlOperatorStore } from './store/operator-store.js';
import { verifyServiceProviders } from './domain/service-code.js';
import { serviceCodeChecks } from './providers/service-code-checks.js';

/**
 * The parts the composition root builds, each once and in order (nothing refers to a part built later). The
 * server, the workers, the admin commands and the tests each take the few parts they use.
 */
export interface Services {
  readonly config: Config;
  /** Erasing a person's data (contract 20). */
  readonly personalData: PersonalDataStore;
  /** Signed relay requests seen: a replayed copy sends nothing (contract 20). */
  readonly relayRequests: RelayRequests;
  /** Prometheus metrics of this process (GET /metrics). */
  readonly metrics: ServiceMetrics;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly db: Db;
  readonly clients: ClientService;
  readonly clientDirectory: ClientDirectory;
  readonly tokens: TokenService;
  readonly tokenEndpoint: TokenEndpoint;
  readonly counters: SqlCounterStore;
  /** CLIENT_RATE_LIMIT_PER_SECOND, exact across instances; null when it is off. */
  readonly clientRate: QuotaLimiter | null;
  readonly authFailures: WindowCounter;
  readonly verificationStore: SqlVerificationStore;
  readonly verifications: VerificationService;
  /** Silent verification's proofs (contract 19): a Firebase PNV token posted for a SILENT verification. */
  readonly silent: SilentService;
  /** Provider answers and receipts. */
  readonly deliveries: DeliveryService;
  /** One driver per verification type (contract 8 and 13). */
  readonly channels: ChannelRegistry;
  /** Number lookups (contract 11). */
  readonly lookups: LookupService;
  /** Traffic per day and country (GET /v1/stats, `otp-service stats`). */
  readonly stats: StatsService;
  /** What the log provider stored. */
  readonly messages: SqlMessageStore;
  /** The stored messages with their verifications' codes and states (the development inbox, `otp-service messages`). */
  readonly inbox: SqlInboxStore;
  /** Countries throttled for their conversion: the watch every create asks, and where throttles are kept. */
  readonly conversion: ConversionWatch;
  readonly conversionStore: SqlConversionStore;
  /** Prefixes blocked by prefix velocity (`otp-service blocks`). */
  readonly prefixBlocks: SqlPrefixBlockStore;
  /** Block and allow lists (`otp-service lists`): where they are kept, and what this process holds of them. */
  readonly numberLists: SqlNumberListStore;
  readonly listsInForce: InForce<NumberLists, ListEntry>;
  readonly ruleModeStore: SqlRuleModeStore;
  readonly riskStore: SqlRiskStore;
  readonly refusals: RefusalRecorder;
  readonly ruleModesInForce: InForce<RuleModes, RuleModeEntry>;
  /** Routes (`otp-service routes`): where they are kept, and what this process holds of them. */
  readonly routeStore: SqlRouteStore;
  readonly routesInForce: InForce<RouteTable, Route>;
  /** Best routes' shares, from the last hour's figures (contract 17, `--policy best`). */
  readonly bestShares: BestShares;
  readonly priceStore: SqlPriceStore;
  readonly pricesInForce: InForce<PriceTable, Price>;
  /** Budgets' spend (contract 17): what budgeted clients' sends hold and cost in the UTC day and month. */
  readonly spend: SpendStore;
  /** CAPTCHA tokens accepted in the last 10 minutes (pruned by housekeeping). */
  readonly captchaTokens: SqlCaptchaTokenStore;
  /** New messages and state changes for open inbox pages; null when the inbox is off (config.devInbox). */
  readonly inboxFeed: InboxFeed | null;
  /** The webhook outbox: delivery log and operator replay. */
  readonly webhooks: SqlWebhookStore;
  /** Starts what this process commits; the workers connect to it while they run. */
  readonly dispatcher: CommitDispatcher;
  readonly providers: Providers;
  /** Revokes the messages of verified and cancelled verifications, after their commit. */
  readonly revoker: MessageRevoker;
  readonly sendWorker: SendWorker;
  /** Providers skipped after failing (in this process): the console's providers page reads it. */
  readonly breaker: CircuitBreaker;
  readonly webhookWorker: DeliveryWorker;
  /** Console operators, their links and sessions (contract 16). */
  readonly operators: OperatorService;
  /** Every change made through the console or the CLI. */
  readonly audit: AuditLog;
}

/** The most messages the development inbox page shows. */
export const devInboxLimit = 200;

export interface ServiceOptions {
  /** Tests only: the database to use, opened already (the harness hands one embedded database to its services in turn). */
  readonly db?: Db;
  /** Tests only: how webhook destinations' names resolve (names that resolve to private addresses, without DNS). */
  readonly webhookLookup?: LookupAll;
}

export async function createServices(
  config: Config,
  logger: Logger,
  clock: Clock,
  random: Random,
  options: ServiceOptions = {},
): Promise<Services> {
  const smsSender = parseE164(config.SMS_SENDER_NUMBER);
  if (!smsSender) throw new Error(`SMS_SENDER_NUMBER "${config.SMS_SENDER_NUMBER}" is not a valid E.164 number`);
  const whatsappSender = config.WHATSAPP_SENDER_NUMBER === undefined ? smsSender : parseE164(config.WHATSAPP_SENDER_NUMBER);
  if (!whatsappSender) throw new Error(`WHATSAPP_SENDER_NUMBER "${config.WHATSAPP_SENDER_NUMBER ?? ''}" is not a valid E.164 number`);
  const voiceCaller = config.VOICE_CALLER_NUMBER === undefined ? smsSender : parseE164(config.VOICE_CALLER_NUMBER);
  if (!voiceCaller) throw new Error(`VOICE_CALLER_NUMBER "${config.VOICE_CALLER_NUMBER ?? ''}" is not a valid E.164 number`);
  const db =
    options.db ??
    (await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      poolSize: config.DATABASE_POOL_SIZE,
      preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      timeoutMs: config.DATABASE_TIMEOUT_MS,
    }));
  const now = () => clock.now().getTime();
  // On PostgreSQL a commit of due events also NOTIFYs, so that workers in other processes start at once.
  const notifyOtherProcesses = db.kind === 'postgres';

  // A client change is seen at once here, and (PostgreSQL) within moments on every other instance: the store's
  // update NOTIFYs in its own transaction.
  const clientStore = new SqlClientStore(db.db, db.kind === 'postgres');
  const clientDirectory = new ClientDirectory(clientStore, now);
  // A change may set or remove a budget: acceptances name budgets only while one is set (SpendStore.kept); a failed
  // read leaves the flag to the next housekeeping round's.
  const clientChanged = (id: string) => {
    clientDirectory.forget(id);
    spend.refreshKept().catch(() => undefined);
  };
  const clients = new ClientService(clientStore, clock, random, clientChanged, config.revealCodesDefault);
  const tokens = await TokenService.create(new SqlSigningKeyStore(db.db), config.TOKEN_TTL_SECONDS, clientDirectory, clock, random);
  const counters = new SqlCounterStore(db.db);
  const authFailures = new WindowCounter(counters, 60_000, now);
  const clientRate =
    config.CLIENT_RATE_LIMIT_PER_SECOND > 0 ? new QuotaLimiter(counters, 1_000, now, config.CLIENT_RATE_LIMIT_PER_SECOND) : null;
  // CLIENT_DAILY_SEND_LIMIT in shares of a hundredth: a claim once per hundred sends, and at most 1.5 % of the
  // day's quota held unused by each other instance (DailySendStore).
  const dailySends =
    config.CLIENT_DAILY_SEND_LIMIT > 0 ? new QuotaLimiter(new DailySendStore(db.db), dayMs, now, config.CLIENT_DAILY_SEND_LIMIT, 100) : null;
  // NEW_COUNTRY_LIMIT_COUNT in shares of one: exact across instances, and claimed only towards new countries.
  const newCountrySends =
    config.NEW_COUNTRY_LIMIT_COUNT > 0 ? new QuotaLimiter(counters, hourMs, now, config.NEW_COUNTRY_LIMIT_COUNT, config.NEW_COUNTRY_LIMIT_COUNT) : null;
  // The room moves with the country's verified codes: each create names it (at least ABROAD_LIMIT_MIN).
  const abroadSends = config.ABROAD_LIMIT_SHARE > 0 ? new QuotaLimiter(counters, hourMs, now, config.ABROAD_LIMIT_MIN) : null;
  const tokenEndpoint = new TokenEndpoint(clientDirectory, tokens, authFailures, config.AUTH_FAILURE_LIMIT);

  const channels = new ChannelRegistry({
    smsSender,
    codeLength: config.OTP_LENGTH,
    callerIdRanges: config.CALLER_ID_RANGES,
    whatsappSender,
    voiceCaller,
    voiceRepeat: config.VOICE_REPEAT,
    silentTimeoutSeconds: config.SILENT_TIMEOUT_SECONDS,
  });
  // The channels with a provider here: a create (or a workflow's step) of another channel is refused.
  const offered = new Set(allChannels.filter((c) => config.providers[c].length > 0));
  const spend = new SpendStore(db.db);
  await spend.refreshKept();
  const verificationStore = new SqlVerificationStore(db.db, notifyOtherProcesses, () => spend.kept);
  // A client's settings come from the directory's cache: no database read per create or send.
  const settingsOf = async (clientId: string): Promise<ClientSettings> => (await clientDirectory.get(clientId))?.settings ?? defaultClientSettings;
  const messages = new SqlMessageStore(db.db, clock);
  const inbox = new SqlInboxStore(db.db, clock);
  const inboxLog = logger.child({ component: 'dev-inbox' });
  const inboxFeed = config.devInbox
    ? new InboxFeed({
        source: inbox,
        clock,
        pollMs: 1_000,
        limit: devInboxLimit,
        onError: (err) => inboxLog.warn({ err }, 'could not read new messages for the development inbox; trying again'),
      })
    : null;
  // A message this process stored shows on open inbox pages at once; other instances' within a poll.
  const messageLog = {
    record: async (entry: LoggedMessage) => {
      await messages.record(entry);
      inboxFeed?.nudge();
    },
  };
  const dispatcher = new CommitDispatcher({ sendMs: config.SEND_LEASE_MS, eventMs: config.WEBHOOK_LEASE_MS });
  // The providers are made further down (they need the delivery service); a commit before then ends nothing to revoke.
  const providersMade: { current: Providers | null } = { current: null };
  const revoker = new MessageRevoker({
    provider: (name) => providersMade.current?.named(name),
    timeoutMs: config.PROVIDER_TIMEOUT_MS,
    logger: logger.child({ component: 'provider' }),
  });
  // Every state change's commit passes here: the metrics count the verifications that ended from its events, and
  // the messages of those verified or cancelled are revoked where their provider can.
  const afterCommit: AfterCommit = {
    claimUntil: (kind, at) => dispatcher.claimUntil(kind, at),
    dispatch: (effects) => {
      metrics.committed(effects);
      dispatcher.dispatch(effects);
      revoker.ended(effects.events);
    },
  };
  const conversionStore = new SqlConversionStore(db.db);
  // Read whole before the first create; a change is announced (PostgreSQL) in the transaction that makes it.
  const numberLists = new SqlNumberListStore(db.db, db.kind === 'postgres');
  const listsInForce = new InForce(numberLists, (entries) => new NumberLists(entries));
  const captchaTokens = new SqlCaptchaTokenStore(db.db);
  await listsInForce.refresh();
  // The one source of a client's webhook secrets: the client directory (a rotation here is seen at once).
  const webhookSecretsOf = async (clientId: string) => {
    const c = await clientDirectory.get(clientId);
    return c ? { current: c.webhookSecret, previous: c.previousWebhookSecret, previousExpiresAt: c.previousWebhookSecretExpiresAt } : null;
  };
  const riskStore = new SqlRiskStore(db.db);
  const refusals = new RefusalRecorder(riskStore, (err) => logger.warn({ err }, 'refusals were not recorded for the verdicts'));
  const ruleModeStore = new SqlRuleModeStore(db.db, db.kind === 'postgres');
  const ruleModesInForce = new InForce(ruleModeStore, (entries) => new RuleModes(entries));
  await ruleModesInForce.refresh();
  const routeStore = new SqlRouteStore(db.db, db.kind === 'postgres');
  const routesInForce = new InForce(routeStore, (routes) => new RouteTable(routes));
  await routesInForce.refresh();
  // Providers failing now are skipped (contract 8), and take no share of a best route.
  const breaker = new CircuitBreaker(now);
  const bestShares = new BestShares(new SqlRouteFigures(db.db), () => routesInForce.current().best, (p) => breaker.isOpen(p), () => clock.now());
  await bestShares.refresh();
  const priceStore = new SqlPriceStore(db.db, db.kind === 'postgres', () => clock.now());
  const pricesInForce = new InForce(priceStore, (prices) => new PriceTable(prices));
  await pricesInForce.refresh();
  // A channel's providers for a number: its route's, else the channel's provider list (SMS_PROVIDER...).
  const configuredOrder = perChannel((c) => providerNames(config.providers, c));
  const providerOrder = (channel: Channel, to: Destination) =>
    routesInForce.current().providersFor(channel, to, configuredOrder[channel], (route) => bestShares.weights(route));
  const metrics = new ServiceMetrics();
  const conversionLog = logger.child({ component: 'conversion' });
  const conversion = new ConversionWatch({
    store: conversionStore,
    policy: {
      // Throttled to the prefix limit: with prefix velocity off there is none to throttle to.
      minConversion: config.PREFIX_LIMIT_COUNT === 0 ? 0 : config.MIN_CONVERSION,
      minSample: config.MIN_CONVERSION_SAMPLE,
      windowSeconds: conversionWindowSeconds,
      shortWindowSeconds: config.CONVERSION_SHORT_WINDOW_SECONDS,
      shortMinSample: config.MIN_CONVERSION_SHORT_SAMPLE,
      resendMinSample: config.MIN_RESEND_SAMPLE,
      throttleSeconds: config.PREFIX_BLOCK_SECONDS,
    },
    ttlSeconds: config.OTP_TTL_SECONDS,
    clock,
    observer: metrics,
    firstProvider: (channel, to) => providerOrder(channel, to)[0] ?? 'none',
    newCountries: config.NEW_COUNTRY_LIMIT_COUNT > 0,
    onThrottle: (t) =>
      conversionLog.warn(
        { regionCode: t.regionCode, countryCode: t.countryCode, network: t.network, provider: t.provider, sends: t.sends, verified: t.verified, until: t.throttledUntil },
        'country throttled to the prefix limit: few of its codes are verified (MIN_CONVERSION)',
      ),
    onClientThrottle: (t) =>
      conversionLog.warn(
        { clientId: t.clientId, sends: t.sends, verified: t.verified, until: t.throttledUntil },
        'client throttled to the prefix limit: few of its codes are verified, across all countries (MIN_CONVERSION)',
      ),
    onResendThrottle: (t) =>
      conversionLog.warn(
        { clientId: t.clientId, resends: t.resends, verified: t.verified, until: t.throttledUntil },
        "client's resends throttled: few of its resent codes are verified; users with no verified history get UNKNOWN_USER_RESENDS resends a code (MIN_RESEND_SAMPLE)",
      ),
  });
  const addressCountries = addressCountriesOf(config.IP_COUNTRY_DATABASE);
  const numberMetadata = new GoogleNumberMetadata();
  const carrierChecks = configuredCarrierChecks(config.carrier, clock, metrics);
  const verifications = new VerificationService({
    store: verificationStore,
    policy: {
      ttlSeconds: config.OTP_TTL_SECONDS,
      maxAttempts: config.OTP_MAX_ATTEMPTS,
      phoneLimit: {
        count: config.PHONE_LIMIT_COUNT,
        windowSeconds: config.PHONE_LIMIT_WINDOW_SECONDS,
        cooldownSeconds: config.PHONE_COOLDOWN_SECONDS,
      },
      resend: { maxSends: config.OTP_MAX_SENDS, cooldownSeconds: config.PHONE_COOLDOWN_SECONDS },
      destinations: { allowedCountries: config.ALLOWED_COUNTRIES, blockedLineTypes: config.BLOCKED_LINE_TYPES },
      clientDailySends: config.CLIENT_DAILY_SEND_LIMIT,
      newCountrySends: config.NEW_COUNTRY_LIMIT_COUNT,
      abroad: { share: config.ABROAD_LIMIT_SHARE, min: config.ABROAD_LIMIT_MIN },
      unknownUserResends: config.UNKNOWN_USER_RESENDS,
      prefix: { count: config.PREFIX_LIMIT_COUNT, windowSeconds: config.PREFIX_LIMIT_WINDOW_SECONDS, blockSeconds: config.PREFIX_BLOCK_SECONDS },
      offered,
      fallbackTypes: channels.fallbackTypes().filter((t) => offered.has(channels.forRequest(t).channel)),
      fallbackAfterSeconds: config.FALLBACK_AFTER_SECONDS,
      signals: signalPolicy(config),
    },
    channels: (type) => channels.forRequest(type),
    afterCommit,
    clock,
    random,
    observer: metrics,
    clientSettings: settingsOf,
    conversion,
    networkOf: (phone) => numberMetadata.networkOf(phone),
    ...(dailySends && { dailySends }),
    ...(newCountrySends && { newCountrySends }),
    ...(abroadSends && { abroadSends }),
    spend,
    sendPrice: (channel, to) => {
      const prices = pricesInForce.current();
      const first = providerOrder(channel, to)[0];
      const known = first === undefined ? null : costOf(null, prices.priceOf(first, channel, to), config.COST_CURRENCY).cost;
      return known ?? prices.highestOf(channel);
    },
    lists: () => listsInForce.current(),
    ruleModes: () => ruleModesInForce.current(),
    refusals,
    carrierChecks,
    decisions: new DecisionWebhookClient(
      new GuardedHttpClient({
        timeoutMs: maxDecisionTimeoutMs,
        allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
        allowedNetworks: config.WEBHOOK_ALLOWED_NETWORKS,
        ...(options.webhookLookup && { lookup: options.webhookLookup }),
        userAgent: 'otp-service-decisions/1',
      }),
      webhookSecretsOf,
      clock,
    ),
    captcha: {
      verifier: new SiteVerify({ turnstile: config.TURNSTILE_VERIFY_URL, hcaptcha: config.HCAPTCHA_VERIFY_URL, recaptcha: config.RECAPTCHA_VERIFY_URL }),
      tokens: captchaTokens,
      failOpen: config.CAPTCHA_FAIL_OPEN,
    },
    firstProvider: (channel, to) => providerOrder(channel, to)[0] ?? null,
    // Verify services (contract 19) check their own codes; the providers are made further down.
    ...(Object.values(config.providers).some((list) => list.some((p) => verifyServiceProviders.has(p.module.name))) && {
      serviceChecks: serviceCodeChecks((name) => providersMade.current?.named(name), config.PROVIDER_TIMEOUT_MS),
    }),
    unservedRoute: (channel, to) => {
      const route = routesInForce.current().routeFor(channel, to);
      return route !== null && !route.providers.some((p) => configuredOrder[channel].includes(p)) ? route : null;
    },
    ...(addressCountries && { addressCountry: (address: string) => addressCountries.countryOf(address) }),
    // A test number's code reaches no provider; the development inbox still shows what would have gone out.
    testSends: async (v) => {
      const channel = channelOfDelivery(v.delivery.channel);
      const from = channel === 'sms' ? smsSender.e164 : (v.pairedE164 ?? smsSender.e164);
      const o = channels.forChannel(channel).outgoing(v, from, v.id, await settingsOf(v.clientId));
      await messageLog.record(loggedMessage(o));
    },
  });
  const deliveries = new DeliveryService({
    store: verificationStore,
    afterCommit,
    providerOrder,
    routeFor: (channel, to) => routesInForce.current().routeFor(channel, to),
    pricing: {
      priceOf: (provider, channel, to) => pricesInForce.current().priceOf(provider, channel, to),
      highestOf: (channel) => pricesInForce.current().highestOf(channel),
      currency: config.COST_CURRENCY,
    },
    callFallback: config.CALL_FALLBACK_TO_SMS ? { sender: smsSender.e164 } : null,
    retryDelays: config.SEND_RETRY_DELAYS,
    clock,
    random,
    observer: metrics,
    steps: (type) => {
      const driver = channels.forRequest(type);
      // The step's sender for the verification's own code (a fixed code keeps it: the same code on every step).
      return { channel: driver.channel, sender: (v) => driver.newCode(random, v.otp).from.e164 };
    },
    countSends: config.CLIENT_DAILY_SEND_LIMIT > 0,
    ...(carrierChecks.callForwarding && {
      callForwarding: { check: carrierChecks.callForwarding, judge: (v, left, f) => verifications.judgeStep(v, left, f) },
    }),
    ruleModes: () => ruleModesInForce.current(),
  });
  const lookups = new LookupService({ store: new SqlLookupStore(db.db), metadata: numberMetadata, clock, random });
  const providerLog = logger.child({ component: 'provider' });
  const providers = new Providers(config.providers, (name) => ({
    messageLog,
    clock,
    callRingSeconds: config.CALL_RING_SECONDS,
    voicePromptsDir: config.VOICE_PROMPTS_DIR ?? null,
    providerTimeoutMs: config.PROVIDER_TIMEOUT_MS,
    logger: providerLog.child({ provider: name }),
    callbackUrl: config.PUBLIC_BASE_URL ? `${config.PUBLIC_BASE_URL}/callbacks/${name}` : null,
    // Receipts that arrive on a provider's own connection (SMPP deliver_sm) walk the same script as callbacks.
    // One that overtook the commit of its send's acceptance here waits for that commit first; one whose send is
    // not known yet is kept (parked) durably, so the provider need not send it again.
    onReceipt: async (provider, receipt, account = '') => {
      await sendWorker.recorded(provider, account, receipt.messageId);
      await deliveries.recordReceipt(provider, receipt, account);
    },
  }));
  providersMade.current = providers;
  // SILENT_PROVIDER=firebase: its tokens are checked by the provider's checker; another takes no token.
  const silentProvider = providers.forChannel('silent')[0];
  const silent = new SilentService({
    store: verificationStore,
    afterCommit: dispatcher,
    clock,
    random,
    maxAttempts: config.OTP_MAX_ATTEMPTS,
    tokens: silentProvider instanceof FirebasePnvProvider ? silentProvider.proofs : null,
    network:
      silentProvider instanceof CamaraSilentProvider && config.PUBLIC_BASE_URL && config.CAMARA_BASE_URL && config.CAMARA_TOKEN_URL && config.CAMARA_CLIENT_ID && config.CAMARA_CLIENT_SECRET
        ? new CamaraNumberVerification({
            authorizeUrl: silentProvider.authorizeUrl,
            base: config.CAMARA_BASE_URL,
            credentials: { tokenUrl: config.CAMARA_TOKEN_URL, clientId: config.CAMARA_CLIENT_ID, clientSecret: config.CAMARA_CLIENT_SECRET },
            publicBaseUrl: config.PUBLIC_BASE_URL,
            timeoutMs: config.PROVIDER_TIMEOUT_MS,
            // The key every instance shares (the access tokens' signing key): any instance reads a state back.
            secret: (await new SqlSigningKeyStore(db.db).currentKey(() => randomBytes(32))).secret,
            nonce: () => random.uuid(),
          })
        : null,
    failStep: (id, reason) => deliveries.silentStepFailed(id, reason),
  });
  const sendWorker = new SendWorker({
    jobs: new SqlSendJobStore(db.db),
    findVerification: (id) => verificationStore.findById(id),
    recordOutcome: (job, provider, result, account, to) => deliveries.recordSendOutcome(job, provider, result, account, to),
    outgoing: async (channel, v, from, sendId) => channels.forChannel(channel).outgoing(v, from, sendId, await settingsOf(v.clientId)),
    providers: (channel) => providers.forChannel(channel),
    breaker,
    leaseMs: config.SEND_LEASE_MS,
    // A call (dropped or voice) rings for up to CALL_RING_SECONDS before its provider can say how it went.
    providerTimeoutMs: (channel) => (channel !== 'sms' ? Math.max(config.PROVIDER_TIMEOUT_MS, callTimeoutMs(config.CALL_RING_SECONDS)) : config.PROVIDER_TIMEOUT_MS),
    clock,
    logger: logger.child({ component: 'send-worker' }),
    observer: metrics,
  });
  const webhooks = new SqlWebhookStore(db.db, notifyOtherProcesses);
  const webhookWorker = new DeliveryWorker({
    outbox: webhooks,
    http: new GuardedHttpClient({
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      allowedNetworks: config.WEBHOOK_ALLOWED_NETWORKS,
      ...(options.webhookLookup && { lookup: options.webhookLookup }),
    }),
    retryDelays: config.WEBHOOK_RETRY_DELAYS,
    leaseMs: config.WEBHOOK_LEASE_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    clock,
    random,
    logger: logger.child({ component: 'webhooks' }),
    observer: metrics,
    secretsOf: webhookSecretsOf,
  });
  return {
    config,
    personalData: new SqlPersonalDataStore(db.db, clock),
    relayRequests: new SqlRelayRequestStore(db.db),
    metrics,
    logger,
    clock,
    db,
    clients,
    clientDirectory,
    tokens,
    tokenEndpoint,
    counters,
    clientRate,
    authFailures,
    verificationStore,
    verifications,
    silent,
    deliveries,
    channels,
    lookups,
    stats: new StatsService({ store: new SqlStatsStore(db.db), verdicts: riskStore, clock }),
    messages,
    inbox,
    prefixBlocks: new SqlPrefixBlockStore(db.db),
    numberLists,
    listsInForce,
    ruleModeStore,
    ruleModesInForce,
    riskStore,
    refusals,
    routeStore,
    routesInForce,
    bestShares,
    priceStore,
    pricesInForce,
    spend,
    captchaTokens,
    conversion,
    conversionStore,
    inboxFeed,
    webhooks,
    dispatcher,
    providers,
    sendWorker,
    revoker,
    breaker,
    webhookWorker,
    operators: new OperatorService(new SqlOperatorStore(db.db), clock, random, consoleSessionPolicy),
    audit: new SqlAuditLog(db.db),
  };
}

/** The provider a channel's sends go to first (a list always names at least one). */
