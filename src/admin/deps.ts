import fs from 'node:fs';
import { channels } from '../domain/channel-driver.js';
import { providerNames } from '../config.js';
import type { Services } from '../services.js';
import { providerModule } from '../providers/registry.js';
import { SqlCostStore } from '../store/cost-store.js';
import { providerFailures, providerTraffic } from '../store/stats-store.js';
import { webhookDestinationProblem, webhookDestinations } from '../webhooks/destination-policy.js';
import type { AdminDeps } from './commands.js';

/**
 * What the operator commands use, from the services: the server's admin socket and a command run straight on the
 * database (cli/main.ts) share it, and the command path loads no HTTP stack for it.
 */
export function adminDeps(services: Services): AdminDeps {
  return {
    clients: services.clients,
    webhooks: services.webhooks,
    clock: services.clock,
    eventsDue: () => services.dispatcher.eventsDue(),
    inbox: services.inbox,
    prefixBlocks: services.prefixBlocks,
    countryThrottles: {
      list: async (now) =>
        (await services.conversionStore.active(now)).map((t) => ({
          country: t.regionCode,
          countryCode: t.countryCode,
          ...(t.network !== '' && { network: t.network }),
          provider: t.provider,
          blockedAt: t.throttledAt.toISOString(),
          blockedUntil: t.throttledUntil.toISOString(),
          sends: t.sends,
          verified: t.verified,
        })),
      lift: async (regionCode, now) => {
        const lifted = await services.conversionStore.lift(regionCode, now);
        // This process's creates see it at once; other instances at their next read.
        await services.conversion.refresh();
        return lifted;
      },
      listClients: async (now) => [
        ...(await services.conversionStore.activeClients(now)).map((t) => ({
          clientId: t.clientId,
          blockedAt: t.throttledAt.toISOString(),
          blockedUntil: t.throttledUntil.toISOString(),
          sends: t.sends,
          verified: t.verified,
        })),
        ...(await services.conversionStore.activeResends(now)).map((t) => ({
          clientId: t.clientId,
          blockedAt: t.throttledAt.toISOString(),
          blockedUntil: t.throttledUntil.toISOString(),
          sends: t.resends,
          verified: t.verified,
          of: 'resends' as const,
        })),
      ],
      liftClient: async (clientId, now) => {
        const lifted = await services.conversionStore.liftClient(clientId, now);
        await services.conversion.refresh();
        return lifted;
      },
    },
    stats: services.stats,
    textPolicy: {
      codeLength: services.config.OTP_LENGTH,
      ttlSeconds: services.config.OTP_TTL_SECONDS,
      fallbackTypes: services.channels.fallbackTypes(),
      webhookUrlProblem: (url) => webhookDestinationProblem(url, webhookDestinations(services.config)),
    },
    publicBaseUrl: services.config.PUBLIC_BASE_URL ?? null,
    snapshot: async (file) => {
      const dump = Buffer.from(await (await services.db.dumpDataDir()).arrayBuffer());
      // It holds what the database holds (secrets' hashes, signing keys): its owner's only, never overwriting.
      await fs.promises.writeFile(file, dump, { mode: 0o600, flag: 'wx' });
      return dump.length;
    },
    lists: { store: services.numberLists, changed: () => services.listsInForce.refresh() },
    rules: { store: services.ruleModeStore, changed: () => services.ruleModesInForce.refresh() },
    routes: {
      store: services.routeStore,
      changed: async () => {
        await services.routesInForce.refresh();
        await services.bestShares.refresh();
      },
      configured: (channel) => providerNames(services.config.providers, channel),
      // Read afresh: a CLI process on PostgreSQL keeps no figures of its own (nor knows the servers' circuits).
      shares: async (route) => {
        await services.bestShares.refresh();
        return services.bestShares.shares(route);
      },
    },
    prices: {
      store: services.priceStore,
      changed: () => services.pricesInForce.refresh(),
      currency: services.config.COST_CURRENCY,
      knownProvider: (name) => providerModule(name) !== undefined,
    },
    costs: new SqlCostStore(services.db.db),
    spend: (clientId, budget) => services.spend.spendOf(clientId, budget, services.clock.now()),
    operators: services.operators,
    consoleOrigin: services.config.consoleOrigin ?? `http://localhost:${services.config.PORT}`,
    audit: services.audit,
    verificationSearch: {
      findById: (id) => services.verificationStore.findById(id),
      search: (by, limit) => services.verificationStore.search(by, limit),
      webhooksOf: (id) => services.webhooks.forVerification(id),
    },
    personalData: services.personalData,
    providers: {
      configured: () => channels.map((channel) => ({ channel, providers: services.config.providers[channel].map((p) => p.module.name) })),
      circuit: (provider) => ({ openUntil: services.breaker.openUntil(provider), failuresInARow: services.breaker.failuresInARow(provider) }),
      latency: () => services.metrics.sendLatency(),
      traffic: (since) => providerTraffic(services.db.db, since),
      failures: (since) => providerFailures(services.db.db, since),
    },
  };
}
