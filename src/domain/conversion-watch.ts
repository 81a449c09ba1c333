import { readsInTurn } from './reads-in-turn.js';
import {
  Throttles,
  underConverting,
  underConvertingClients,
  underConvertingResends,
  clientSettleSeconds,
  shortWindowAt,
  type ClientThrottle,
  type ClientTraffic,
  type ResendThrottle,
  type ResendTraffic,
  type ConversionPolicy,
  type Route,
  type RouteTraffic,
  type Throttle,
} from './conversion.js';
import type { Channel } from './channel-driver.js';
import type { Destination } from './routes.js';
import type { Clock } from './ports.js';

/** Where conversion is read and throttles kept (port; src/store/conversion-store.ts). */
export interface ConversionStore {
  /**
   * Each route's verifications created since `since` (test numbers aside, sent ones only), leaving out those made
   * before the end of the route's last throttle: a throttle served or lifted starts the count afresh.
   */
  traffic(since: Date, recent?: { readonly since: Date; readonly until: Date } | null): Promise<RouteTraffic[]>;
  /** Throttles these routes from `at` to `until`, unless one is in force already; answers the ones it started. */
  throttle(routes: readonly RouteTraffic[], at: Date, until: Date): Promise<Throttle[]>;
  /** Throttles in force at `now`. */
  active(now: Date): Promise<Throttle[]>;
  /**
   * Each client's sends across all countries of the verifications created between `since` and `settledBefore`,
   * as `traffic` counts them (a throttle served starts afresh).
   */
  clientTraffic(since: Date, settledBefore: Date): Promise<ClientTraffic[]>;
  /** Throttles these clients from `at` to `until`, unless one is in force already; answers the ones it started. */
  throttleClients(clients: readonly ClientTraffic[], at: Date, until: Date): Promise<ClientThrottle[]>;
  /** Client throttles in force at `now`. */
  activeClients(now: Date): Promise<ClientThrottle[]>;
  /**
   * Each client's resends made in (since, until] of verifications created since `createdSince`, and the codes
   * among them verified, leaving out those made before the end of the client's last resend throttle.
   */
  resendTraffic(since: Date, until: Date, createdSince: Date): Promise<ResendTraffic[]>;
  /** Throttles these clients' resends from `at` to `until`, unless one is in force already; answers the ones it started. */
  throttleResends(clients: readonly ResendTraffic[], at: Date, until: Date): Promise<ResendThrottle[]>;
  /** Resend throttles in force at `now`. */
  activeResends(now: Date): Promise<ResendThrottle[]>;
  /**
   * Records the countries where each client had a code verified among the verifications created since `since`,
   * and answers every country recorded with a verified code since `keptSince` (NEW_COUNTRY_LIMIT_COUNT).
   */
  verifiedCountries(since: Date, keptSince: Date): Promise<{ readonly clientId: string; readonly regionCode: string }[]>;
}

/** How long a country stays known to a client after its last verified code there. */
export const knownCountryDays = 30;

/** Told of the throttles in force each time they are read (metrics). */
export interface ConversionObserver {
  throttlesRead(throttles: readonly Throttle[]): void;
}

export interface ConversionWatchDeps {
  readonly store: ConversionStore;
  readonly policy: ConversionPolicy;
  readonly clock: Clock;
  /** The provider a channel's first send to a number goes to (its route's first); `none` for a channel not offered. */
  readonly firstProvider: (channel: Channel, to: Destination) => string;
  /** Told of each throttle this process started (the log). */
  readonly onThrottle?: (t: Throttle) => void;
  /** Told of each client throttle this process started (the log). */
  readonly onClientThrottle?: (t: ClientThrottle) => void;
  /** Told of each resend throttle this process started (the log). */
  readonly onResendThrottle?: (t: ResendThrottle) => void;
  /** How long a code lives (OTP_TTL_SECONDS): a resend within the short window is of a code created no earlier. */
  readonly ttlSeconds?: number;
  readonly observer?: ConversionObserver;
  /** NEW_COUNTRY_LIMIT_COUNT is on: the countries where each client had codes verified are read too. */
  readonly newCountries?: boolean;
}

/**
 * Watches conversion by country and provider, every instance alike (the throttles live in the database, so any
 * instance may start one and all of them see it at their next refresh), and answers creates from what it last
 * read: a create reads no conversion figure itself.
 */
export class ConversionWatch {
  private current = new Throttles([]);
  private clients: ReadonlyMap<string, ClientThrottle> = new Map();
  private resends: ReadonlyMap<string, ResendThrottle> = new Map();
  /** `client|region` of the countries known to each client; null until first read (every country counts as known). */
  private known: ReadonlySet<string> | null = null;
  /** The clients with a known country at all. */
  private knowing: ReadonlySet<string> = new Set();
  /** Codes verified per country over the last hour, as last read. */
  private verified: ReadonlyMap<string, number> = new Map();

  constructor(private readonly deps: ConversionWatchDeps) {}

  /** Reads the last hour's conversion, throttles the routes under MIN_CONVERSION, and reads the throttles in force. */
  readonly refresh = readsInTurn(() => this.read());

  private async read(): Promise<void> {
    const { store, policy, clock } = this.deps;
    const now = clock.now();
    if (this.deps.newCountries) {
      // A code is verified within its lifetime, so the last hour's creates hold every verify since the last read.
      const since = new Date(now.getTime() - policy.windowSeconds * 1000);
      const rows = await store.verifiedCountries(since, new Date(now.getTime() - knownCountryDays * 86_400_000));
      this.known = new Set(rows.map((r) => `${r.clientId}|${r.regionCode}`));
      this.knowing = new Set(rows.map((r) => r.clientId));
    }
    if (policy.minConversion === 0) return;
    // The short window's sends were created within the hour: read with it, in the same statement.
    const recent = shortWindowAt(now, policy);
    const traffic = await store.traffic(new Date(now.getTime() - policy.windowSeconds * 1000), recent);
    const verified = new Map<string, number>();
    for (const t of traffic) verified.set(t.regionCode, (verified.get(t.regionCode) ?? 0) + t.verified);
    this.verified = verified;
    const under = underConverting(traffic, policy);
    if (under.length > 0) {
      const started = await store.throttle(under, now, new Date(now.getTime() + policy.throttleSeconds * 1000));
      for (const t of started) this.deps.onThrottle?.(t);
    }
    const since = new Date(now.getTime() - policy.windowSeconds * 1000);
    const settledBefore = new Date(now.getTime() - clientSettleSeconds * 1000);
    const underClients = underConvertingClients(await store.clientTraffic(since, settledBefore), policy);
    if (underClients.length > 0) {
      const started = await store.throttleClients(underClients, now, new Date(now.getTime() + policy.throttleSeconds * 1000));
      for (const t of started) this.deps.onClientThrottle?.(t);
    }
    this.clients = new Map((await store.activeClients(now)).map((t) => [t.clientId, t]));
    if (recent && policy.resendMinSample) {
      // A resend is of a code still alive: its verification was created at most a lifetime before the window.
      const createdSince = new Date(recent.since.getTime() - (this.deps.ttlSeconds ?? 600) * 1000);
      const underResends = underConvertingResends(await store.resendTraffic(recent.since, recent.until, createdSince), policy);
      if (underResends.length > 0) {
        const started = await store.throttleResends(underResends, now, new Date(now.getTime() + policy.throttleSeconds * 1000));
        for (const t of started) this.deps.onResendThrottle?.(t);
      }
      this.resends = new Map((await store.activeResends(now)).map((t) => [t.clientId, t]));
    }
    const active = await store.active(now);
    this.current = new Throttles(active);
    this.deps.observer?.throttlesRead(active);
  }

  /** Codes verified in a country over the last hour, across clients, as last read (0 with MIN_CONVERSION=0). */
  verifiedIn(regionCode: string): number {
    return this.verified.get(regionCode) ?? 0;
  }

  throttleOn(route: Route, now: Date): Throttle | null {
    return this.current.on(route, now);
  }

  /** The throttle on a client for its conversion across all countries, if one is in force at `now`. */
  clientThrottleOn(clientId: string, now: Date): ClientThrottle | null {
    const t = this.clients.get(clientId);
    return t && t.throttledUntil > now ? t : null;
  }

  /** The throttle on a client's resends to unknown users, if one is in force at `now` (MIN_RESEND_SAMPLE). */
  resendThrottleOn(clientId: string, now: Date): ResendThrottle | null {
    const t = this.resends.get(clientId);
    return t && t.throttledUntil > now ? t : null;
  }

  /**
   * Whether the country is known to the client: it had a code verified there in the last 30 days (as last read).
   * A client with no verified code anywhere has no users to tell an attack from (a new integration, a test
   * set-up): every country counts as known to it, and its conversion across all countries and the daily quota
   * judge it. Before the first read every country counts as known, so that an instance starting refuses nobody.
   */
  knowsCountry(clientId: string, regionCode: string): boolean {
    return this.known === null || !this.knowing.has(clientId) || this.known.has(`${clientId}|${regionCode}`);
  }

  firstProvider(channel: Channel, to: Destination): string {
    return this.deps.firstProvider(channel, to);
  }
}
