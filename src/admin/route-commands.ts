import { sendingChannels as channels, type Channel } from '../domain/channel-driver.js';
import type { Clock } from '../domain/ports.js';
import { destinationRank } from '../domain/destinations.js';
import { defaultDestination, failoverAfterProblem, parseDestination, policyProblem, weightsProblem, type Route, type RouteStore } from '../domain/routes.js';
import type { ProviderShare, RoutePolicy } from '../domain/route-policy.js';

/**
 * `otp-service routes set CHANNEL DESTINATION PROVIDER[,PROVIDER...]`, `routes remove CHANNEL DESTINATION` and
 * `routes list` (contract 17).
 */
export type RouteCommand =
  | {
      readonly name: 'routes.set';
      readonly channel: string;
      readonly destination: string;
      readonly providers: readonly string[];
      /** `--weights`: one a provider; null: the list's order for every verification. */
      readonly weights?: readonly number[] | null;
      /** `--failover-after`: seconds without a DELIVERED receipt before the next provider; null: none. */
      readonly failoverAfterSeconds?: number | null;
      /** `--policy`: ordered (absent) or best. */
      readonly policy?: string;
    }
  | { readonly name: 'routes.remove'; readonly channel: string; readonly destination: string }
  | { readonly name: 'routes.list' };

/** What the route commands use. */
export interface RouteDeps {
  readonly store: RouteStore;
  /** Reads the routes again in this process, so that its sends follow a change at once. */
  readonly changed: () => Promise<void>;
  /** The providers configured here for a channel (its *_PROVIDER list), in order: the channel's default route. */
  readonly configured: (channel: Channel) => readonly string[];
  readonly clock: Clock;
  /** A best route's shares now and what they come from (the last hour's figures, the circuits this process knows). */
  readonly shares?: (route: Route) => Promise<readonly ProviderShare[]>;
}

/** A route as `routes list --json` prints it. */
export interface RouteView {
  readonly channel: Channel;
  readonly destination: string;
  readonly providers: readonly string[];
  readonly weights: readonly number[] | null;
  readonly failoverAfterSeconds: number | null;
  readonly policy: RoutePolicy;
  /** `route`: set with `routes set`; `settings`: the channel's provider list, its default route while none is set. */
  readonly source: 'route' | 'settings';
  /** A best route's providers: each one's share of first sends and why (`routes list`); absent for an ordered route. */
  readonly shares?: readonly ProviderShare[];
}

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export function isRouteCommandName(name: unknown): name is RouteCommand['name'] {
  return name === 'routes.set' || name === 'routes.remove' || name === 'routes.list';
}

/** Checks a route command that came over the admin socket (untyped JSON); an error text when it is not one. */
export function parseRouteCommand(c: Record<string, unknown>): RouteCommand | string {
  if (c.name === 'routes.list') return { name: 'routes.list' };
  if (typeof c.channel !== 'string' || typeof c.destination !== 'string') return `${String(c.name)} needs a channel and a destination`;
  if (c.name === 'routes.remove') return { name: 'routes.remove', channel: c.channel, destination: c.destination };
  if (c.name !== 'routes.set') return `unknown command ${String(c.name)}`;
  if (!Array.isArray(c.providers) || !c.providers.every((p) => typeof p === 'string')) return 'routes.set needs providers';
  // Given but malformed is refused, never taken as absent (the console sends what the operator typed).
  if (c.weights !== undefined && c.weights !== null && !(Array.isArray(c.weights) && c.weights.every((w) => typeof w === 'number'))) {
    return '--weights takes whole numbers, one a provider (80,20)';
  }
  if (c.failoverAfterSeconds !== undefined && c.failoverAfterSeconds !== null && typeof c.failoverAfterSeconds !== 'number') return '--failover-after takes whole seconds (20)';
  if (c.policy !== undefined && c.policy !== null && typeof c.policy !== 'string') return '--policy is ordered or best';
  const weights = Array.isArray(c.weights) ? (c.weights as number[]) : null;
  const failoverAfterSeconds = typeof c.failoverAfterSeconds === 'number' ? c.failoverAfterSeconds : null;
  const policy = typeof c.policy === 'string' ? { policy: c.policy } : {};
  return { name: 'routes.set', channel: c.channel, destination: c.destination, providers: c.providers as string[], weights, failoverAfterSeconds, ...policy };
}

/** A route's channel, destination and providers checked, or what is wrong with them. */
type Checked = Pick<Route, 'channel' | 'destination' | 'providers' | 'weights' | 'failoverAfterSeconds' | 'policy'> | { readonly problem: string };

/**
 * What is wrong with a route change, said so that the operator can fix it: its channel, its destination, and
 * each provider, which must be configured for the channel in the process that runs the command.
 */
export function checkRoute(
  command: Extract<RouteCommand, { name: 'routes.set' | 'routes.remove' }>,
  configured: (channel: Channel) => readonly string[],
): Checked {
  const channel = channels.find((c) => c === command.channel.toLowerCase());
  if (!channel) return { problem: `a route's channel is ${channels.join(', ')}, not "${command.channel}"` };
  const destination = parseDestination(command.destination);
  if (destination === null) {
    return { problem: `a route's destination is a country (NG), + and the start of a number (+23480) or ${defaultDestination}, not "${command.destination}"` };
  }
  if (command.name === 'routes.remove') return { channel, destination, providers: [], weights: null, failoverAfterSeconds: null, policy: 'ordered' };
  const providers = command.providers.map((p) => p.trim().toLowerCase()).filter((p) => p.length > 0);
  if (providers.length === 0) return { problem: 'a route needs at least one provider' };
  const twice = providers.find((p, i) => providers.indexOf(p) !== i);
  if (twice) return { problem: `${twice} is named twice: a route tries each provider once` };
  const here = configured(channel);
  const missing = providers.filter((p) => !here.includes(p));
  if (missing.length > 0) {
    const list = here.length > 0 ? here.join(', ') : 'none';
    return {
      problem: `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not configured for ${channel} here (configured: ${list}): add ${missing.length === 1 ? 'it' : 'them'} to the channel's provider setting first`,
    };
  }
  const weights = command.weights ?? null;
  const wrongWeights = weights === null ? null : weightsProblem(weights, providers);
  if (wrongWeights !== null) return { problem: wrongWeights };
  const failoverAfterSeconds = command.failoverAfterSeconds ?? null;
  const wrongFailover = failoverAfterSeconds === null ? null : failoverAfterProblem(failoverAfterSeconds, providers);
  if (wrongFailover !== null) return { problem: wrongFailover };
  const policy = command.policy ?? 'ordered';
  const wrongPolicy = policyProblem(policy, providers, weights);
  if (wrongPolicy !== null) return { problem: wrongPolicy };
  return { channel, destination, providers, weights, failoverAfterSeconds, policy: policy === 'best' ? 'best' : 'ordered' };
}

export async function runRouteCommand(deps: RouteDeps, command: RouteCommand): Promise<Result> {
  if (command.name === 'routes.list') return { ok: true, value: await routeViews(deps) };
  const checked = checkRoute(command, deps.configured);
  if ('problem' in checked) return { ok: false, error: checked.problem };
  const { channel, destination } = checked;
  if (command.name === 'routes.remove') {
    if (!(await deps.store.remove(channel, destination))) return { ok: false, error: `there is no ${channel} route for ${destination}` };
    await deps.changed();
    return { ok: true, value: { removed: { channel, destination } } };
  }
  const route: Route = { ...checked, updatedAt: deps.clock.now() };
  const added = await deps.store.set(route);
  await deps.changed();
  return { ok: true, value: { [added ? 'added' : 'updated']: view(route, 'route') } };
}

/** Every route set, then each channel's provider list where no `default` route replaces it. */
async function routeViews(deps: RouteDeps): Promise<RouteView[]> {
  const shown = async (r: Route): Promise<RouteView> => {
    const shares = r.policy === 'best' && deps.shares ? await deps.shares(r) : null;
    return { ...view(r, 'route'), ...(shares && { shares }) };
  };
  const routes = await Promise.all((await deps.store.all()).map(shown));
  const fromSettings = channels
    .filter((c) => deps.configured(c).length > 0 && !routes.some((r) => r.channel === c && r.destination === defaultDestination))
    .map((c) => view({ channel: c, destination: defaultDestination, providers: deps.configured(c), weights: null, failoverAfterSeconds: null, policy: 'ordered' }, 'settings'));
  return [...routes, ...fromSettings].sort((a, b) => channels.indexOf(a.channel) - channels.indexOf(b.channel) || destinationRank(a.destination) - destinationRank(b.destination) || a.destination.localeCompare(b.destination));
}

function view(r: Pick<Route, 'channel' | 'destination' | 'providers' | 'weights' | 'failoverAfterSeconds' | 'policy'>, source: RouteView['source']): RouteView {
  const { channel, destination, providers, weights, failoverAfterSeconds, policy } = r;
  return { channel, destination, providers, weights, failoverAfterSeconds, policy, source };
}
