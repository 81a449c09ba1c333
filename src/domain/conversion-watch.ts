import { Throttles, underConverting, type ConversionPolicy, type Route, type RouteTraffic, type Throttle } from './conversion.js';
import type { Channel } from './channel-driver.js';
import type { Clock } from './ports.js';

/** Where conversion is read and throttles kept (port; src/store/conversion-store.ts). */
export interface ConversionStore {
  /**
   * Each route's verifications created since `since` (test numbers aside, sent ones only), leaving out those made
   * before the end of the route's last throttle: a throttle served or lifted starts the count afresh.
   */
  traffic(since: Date): Promise<RouteTraffic[]>;
  /** Throttles these routes from `at` to `until`, unless one is in force already; answers the ones it started. */
  throttle(routes: readonly RouteTraffic[], at: Date, until: Date): Promise<Throttle[]>;
  /** Throttles in force at `now`. */
  active(now: Date): Promise<Throttle[]>;
}

/** Told of the throttles in force each time they are read (metrics). */
export interface ConversionObserver {
  throttlesRead(throttles: readonly Throttle[]): void;
}

export interface ConversionWatchDeps {
  readonly store: ConversionStore;
  readonly policy: ConversionPolicy;
  readonly clock: Clock;
  /** The provider each channel's first send goes to. */
  readonly firstProviders: Readonly<Record<Channel, string>>;
  /** Told of each throttle this process started (the log). */
  readonly onThrottle?: (t: Throttle) => void;
  readonly observer?: ConversionObserver;
}

/**
 * Watches conversion by country and provider, every instance alike (the throttles live in the database, so any
 * instance may start one and all of them see it at their next refresh), and answers creates from what it last
 * read: a create reads no conversion figure itself.
 */
export class ConversionWatch {
  private current = new Throttles([]);

  constructor(private readonly deps: ConversionWatchDeps) {}

  /** Reads the last hour's conversion, throttles the routes under MIN_CONVERSION, and reads the throttles in force. */
  async refresh(): Promise<void> {
    const { store, policy, clock } = this.deps;
    if (policy.minConversion === 0) return;
    const now = clock.now();
    const under = underConverting(await store.traffic(new Date(now.getTime() - policy.windowSeconds * 1000)), policy);
    if (under.length > 0) {
      const started = await store.throttle(under, now, new Date(now.getTime() + policy.throttleSeconds * 1000));
      for (const t of started) this.deps.onThrottle?.(t);
    }
    const active = await store.active(now);
    this.current = new Throttles(active);
    this.deps.observer?.throttlesRead(active);
  }

  throttleOn(route: Route, now: Date): Throttle | null {
    return this.current.on(route, now);
  }

  firstProvider(channel: Channel): string {
    return this.deps.firstProviders[channel];
  }
}
