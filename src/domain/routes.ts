import type { Channel } from './channel-driver.js';
import { DestinationIndex, type Destination } from './destinations.js';
import type { RoutePolicy } from './route-policy.js';

export { defaultDestination, parseDestination, type Destination } from './destinations.js';

/**
 * Routes (contract 17): which providers carry a channel's codes to which destinations, in failover order. A
 * destination is an E.164 prefix (`+23480`), a country (ISO 3166 alpha-2, `NG`) or `default`; for a number, the
 * longest matching prefix wins, then its country, then the channel's `default` route, then the channel's provider
 * list (SMS_PROVIDER and the others), which is every channel's default route until one is set.
 */
export interface Route {
  readonly channel: Channel;
  readonly destination: string;
  /** Provider names, in failover order. */
  readonly providers: readonly string[];
  /**
   * One whole number a provider, or null: each verification's first provider is drawn by these weights (80,20:
   * about four in five go first through the first), the others following in the route's order.
   */
  readonly weights: readonly number[] | null;
  /**
   * Delivery-confirmed failover: a send accepted by a provider of the route that has no DELIVERED receipt this
   * many seconds later, while its verification is PENDING, goes out once more through the route's next provider;
   * null: only a refusal, a failure or an UNDELIVERED receipt moves a code on.
   */
  readonly failoverAfterSeconds: number | null;
  /** `best`: the first provider drawn by shares that follow each provider's measured results (route-policy.ts). */
  readonly policy: RoutePolicy;
  readonly updatedAt: Date;
}

/** Routes in the database; each change is announced to every instance. */
export interface RouteStore {
  /** Adds the route of `route.channel` and `route.destination`, or replaces it; true when it was new. */
  set(route: Route): Promise<boolean>;
  /** False when there was no such route. */
  remove(channel: Channel, destination: string): Promise<boolean>;
  all(): Promise<Route[]>;
}

/** The routes in force, as one process last read them: a send asks them without reading the database. */
export class RouteTable {
  private readonly routes: DestinationIndex<Route>;
  /** The routes with `--policy best`, whose figures the process keeps (BestShares). */
  readonly best: readonly Route[];

  constructor(routes: readonly Route[]) {
    this.routes = new DestinationIndex(routes, (r) => r.channel);
    this.best = routes.filter((r) => r.policy === 'best');
  }

  /** The route a send of `channel` to `to` takes; null: none is set, and the channel's provider list applies. */
  routeFor(channel: Channel, to: Destination): Route | null {
    return this.routes.find(channel, to);
  }

  /**
   * The providers a send of `channel` to `to` tries, in order: its route's (on a weighted route, the one drawn for
   * this verification first; on a best route, drawn by `shares`), else `configured` (the channel's list).
   */
  providersFor(channel: Channel, to: Destination, configured: readonly string[], shares?: (route: Route) => readonly number[]): readonly string[] {
    const route = this.routeFor(channel, to);
    if (!route) return configured;
    const weights = route.policy === 'best' ? (shares?.(route) ?? null) : route.weights;
    if (!weights || weights.every((w) => w === 0)) return route.providers;
    const first = drawn(weights, to.id);
    return [...route.providers.slice(first, first + 1), ...route.providers.filter((_, i) => i !== first)];
  }
}

/** The longest delivery-confirmed failover wait a route takes: a code lives minutes, not hours. */
export const maxFailoverAfterSeconds = 3600;

/** What is wrong with `--failover-after` for `providers`, or null: whole seconds from 1 to an hour, and a provider to fail over to. */
export function failoverAfterProblem(seconds: number, providers: readonly string[]): string | null {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > maxFailoverAfterSeconds) return `--failover-after is whole seconds from 1 to ${maxFailoverAfterSeconds}`;
  if (providers.length < 2) return '--failover-after needs a second provider in the route to send through';
  return null;
}

/**
 * What is wrong with weights for `providers`, or null: one whole number from 0 to 1000 a provider, at least one
 * above 0.
 */
export function weightsProblem(weights: readonly number[], providers: readonly string[]): string | null {
  if (weights.length !== providers.length) return `--weights takes one weight a provider: ${providers.length} for ${providers.join(',')}, not ${weights.length}`;
  if (!weights.every((w) => Number.isInteger(w) && w >= 0 && w <= 1000)) return '--weights are whole numbers from 0 to 1000 (80,20)';
  if (weights.every((w) => w === 0)) return '--weights needs at least one weight above 0';
  return null;
}

/** What is wrong with `--policy` for a route, or null: best chooses between providers by itself, so takes no weights. */
export function policyProblem(policy: string, providers: readonly string[], weights: readonly number[] | null): string | null {
  if (policy !== 'ordered' && policy !== 'best') return `--policy is ordered or best, not "${policy}"`;
  if (policy === 'best' && weights !== null) return '--policy best draws its own shares from what each provider delivers: it takes no --weights';
  if (policy === 'best' && providers.length < 2) return '--policy best needs a second provider in the route to choose between';
  return null;
}

/** The index drawn by `weights` for a verification: its id's hash, so that every instance and turn draws the same. */
function drawn(weights: readonly number[], id: string): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let point = fnv1a(id) % total;
  for (const [i, w] of weights.entries()) {
    if (point < w) return i;
    point -= w;
  }
  return 0;
}

/** FNV-1a, 32 bits: spreads ids (UUID v7 share their leading time bits) evenly over the weights. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

