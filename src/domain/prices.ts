import type { Channel } from './channel-driver.js';
import { DestinationIndex, type Destination } from './destinations.js';
import { largest, zero, type Amount, type Money } from './money.js';

/**
 * What a provider charges for one message of a channel to a destination (contract 17, `prices import`): the
 * destination as routes name it (`+23480`, `NG`, `default`), matched as routes are.
 */
export interface Price {
  readonly provider: string;
  readonly channel: Channel;
  readonly destination: string;
  readonly currency: string;
  readonly price: Amount;
}

/** Prices in the database; each change is announced to every instance. */
export interface PriceStore {
  /** Adds each price, or replaces the one of its provider, channel and destination, in one transaction; how many were new. */
  put(prices: readonly Price[]): Promise<{ readonly added: number; readonly updated: number }>;
  /** False when there was no such price. */
  remove(provider: string, channel: Channel, destination: string): Promise<boolean>;
  all(): Promise<Price[]>;
}

/** The prices in force, as one process last read them: an acceptance prices its send without reading the database. */
export class PriceTable {
  private readonly prices: DestinationIndex<Price>;
  /** Per channel, the highest price: what a send of unknown price counts as against a budget. */
  private readonly highest: ReadonlyMap<Channel, Amount>;

  constructor(prices: readonly Price[]) {
    this.prices = new DestinationIndex(prices, (p) => `${p.provider}|${p.channel}`);
    const byChannel = new Map<Channel, Amount[]>();
    for (const p of prices) byChannel.set(p.channel, [...(byChannel.get(p.channel) ?? []), p.price]);
    this.highest = new Map([...byChannel].map(([channel, list]) => [channel, largest(list)]));
  }

  /** The imported price of a send of `channel` through `provider` to `to`; null when none matches. */
  priceOf(provider: string, channel: Channel, to: Pick<Destination, 'phoneNumber' | 'regionCode'>): Money | null {
    const found = this.prices.find(`${provider}|${channel}`, to);
    return found && { amount: found.price, currency: found.currency };
  }

  /** The highest imported price of `channel`, 0 when it has none. */
  highestOf(channel: Channel): Amount {
    return this.highest.get(channel) ?? '0';
  }
}

/**
 * A send's cost (contract 17): the price its provider reported for it when that is in the deployment's currency
 * (nothing is nothing in any: the log provider reports 0 XXX, ISO 4217's "no currency"), else the imported price
 * of its provider, channel and destination, else unknown (null). A reported price in another currency is kept on
 * the attempt (`reported`) but never summed.
 */
export function costOf(reported: Money | null, imported: Money | null, currency: string): { readonly cost: Amount | null; readonly reported: Money | null } {
  if (reported !== null && (reported.currency === currency || reported.amount === zero)) return { cost: reported.amount, reported };
  return { cost: imported !== null && imported.currency === currency ? imported.amount : null, reported };
}

