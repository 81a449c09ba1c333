import { readsInTurn } from './reads-in-turn.js';
import type { Channel } from './channel-driver.js';
import type { Route } from './routes.js';

/**
 * `routes set ... --policy best` (contract 17): each verification's first provider drawn by shares that follow what
 * the service measured of each provider of the route over the last hour: the share of its sends delivered
 * (receipts) and of its codes verified.
 */
export type RoutePolicy = 'ordered' | 'best';

/** How far back a best route's figures go. */
export const bestWindowSeconds = 3600;
/** Each provider of a best route but the best keeps this share, so that it stays measured. */
export const floorShare = 0.05;

/** What one provider of a route did in the window: sends it took, those delivered, and codes verified after its send. */
export interface ProviderFigures {
  readonly sends: number;
  readonly delivered: number;
  readonly verified: number;
}

/** A provider's share of a best route's first sends, with what it is based on. */
export interface ProviderShare extends ProviderFigures {
  readonly provider: string;
  /** Of every thousand verifications, how many go first through it. */
  readonly perMille: number;
  /** The measured score (delivered and verified shares, smoothed), from 0 to 1. */
  readonly score: number;
  /** `best`: the highest score; `floor`: kept measured; `circuit open`: failing now, so none. */
  readonly why: 'best' | 'floor' | 'circuit open';
}

/** The key a route's provider's figures are kept under. */
export function figuresKey(channel: Channel, destination: string, provider: string): string {
  return `${channel}|${destination}|${provider}`;
}

const none: ProviderFigures = { sends: 0, delivered: 0, verified: 0 };

/**
 * A provider's score: its delivered and verified shares together, each smoothed towards a half (one success and
 * one failure added), so that a provider with a handful of sends is neither best nor worst by luck alone.
 */
export function score(f: ProviderFigures): number {
  return (f.delivered + f.verified + 1) / (2 * f.sends + 2);
}

/**
 * The shares of a best route's providers: the highest score takes all but the floor of each other provider, a
 * provider whose circuit is open takes none (its floor goes to the best). Ties go to the earlier provider of the
 * route; with every circuit open, the route's order stands (the send worker skips what is open anyway).
 */
export function bestShares(providers: readonly string[], figures: (provider: string) => ProviderFigures | undefined, open: (provider: string) => boolean): ProviderShare[] {
  const rows = providers.map((provider) => ({ provider, ...(figures(provider) ?? none) }));
  const scored = rows.map((r) => ({ ...r, score: score(r), open: open(r.provider) }));
  const candidates = scored.filter((r) => !r.open);
  const pool = candidates.length > 0 ? candidates : scored;
  const best = pool.reduce((top, r) => (r.score > top.score ? r : top));
  const floor = Math.round(floorShare * 1000);
  const floors = pool.filter((r) => r !== best).length * floor;
  return scored.map(({ open: isOpen, ...r }) => {
    const why = r.provider === best.provider ? 'best' : isOpen && candidates.length > 0 ? 'circuit open' : 'floor';
    const perMille = why === 'best' ? 1000 - floors : why === 'floor' ? floor : 0;
    return { ...r, perMille, why };
  });
}

/** The figures of best routes' providers (port; src/store/route-figures-store.ts). */
export interface RouteFiguresStore {
  /** Each provider's figures on each of `routes` (keyed by figuresKey) for sends made since `since`. */
  figures(routes: readonly Pick<Route, 'channel' | 'destination'>[], since: Date): Promise<ReadonlyMap<string, ProviderFigures>>;
}

/**
 * The shares of the best routes in force, as this process last read their figures: a create draws its first
 * provider from them without a query. The figures are read again every half minute and when the routes change.
 */
export class BestShares {
  private figures: ReadonlyMap<string, ProviderFigures> = new Map();

  constructor(
    private readonly store: RouteFiguresStore,
    /** The routes with `--policy best` in force. */
    private readonly routes: () => readonly Route[],
    /** Whether a provider's circuit is open in this process (contract 8): it takes no share while it is. */
    private readonly open: (provider: string) => boolean,
    private readonly now: () => Date,
  ) {}

  readonly refresh = readsInTurn(async () => {
    const best = this.routes();
    this.figures = best.length === 0 ? new Map() : await this.store.figures(best, new Date(this.now().getTime() - bestWindowSeconds * 1000));
  });

  shares(route: Pick<Route, 'channel' | 'destination' | 'providers'>): ProviderShare[] {
    return bestShares(route.providers, (p) => this.figures.get(figuresKey(route.channel, route.destination, p)), this.open);
  }

  /** A route's shares as weights, one a provider, per thousand. */
  weights(route: Pick<Route, 'channel' | 'destination' | 'providers'>): number[] {
    return this.shares(route).map((s) => s.perMille);
  }
}
