import { isRegion } from './phone.js';
import type { Verification } from './verification.js';

/**
 * Where a code goes, as routes and prices match it: its verification (whose id draws a weighted route's first
 * provider), its number (E.164) and that number's country (null when not known).
 */
export type Destination = Pick<Verification, 'id' | 'phoneNumber' | 'regionCode'>;

export const defaultDestination = 'default';

/**
 * A destination as routes and prices name it: `default`, a country's code upper-cased (`ng` is `NG`), or + and the
 * digits of a number's start (spaces, dashes and brackets dropped); null when it is none of these.
 */
export function parseDestination(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === defaultDestination) return defaultDestination;
  if (/^[A-Za-z]{2}$/.test(trimmed)) return isRegion(trimmed.toUpperCase()) ? trimmed.toUpperCase() : null;
  const prefix = trimmed.replace(/[\s()-]/g, '');
  return /^\+[1-9][0-9]{0,14}$/.test(prefix) ? prefix : null;
}

/** Prefixes first (as they are matched first), then countries, then `default`: the order lists show them in. */
export function destinationRank(destination: string): number {
  return destination.startsWith('+') ? 0 : destination === defaultDestination ? 2 : 1;
}

/**
 * Entries named by a scope (a channel; a provider and a channel) and a destination, matched as routes and prices
 * are: for a number, the longest matching prefix wins, then its country, then the scope's `default`.
 */
export class DestinationIndex<T extends { readonly destination: string }> {
  /** Per scope: prefixes longest first; then countries and `default` by scope and name. */
  private readonly prefixes = new Map<string, T[]>();
  private readonly named = new Map<string, T>();

  constructor(entries: readonly T[], scopeOf: (entry: T) => string) {
    for (const e of entries) {
      const scope = scopeOf(e);
      if (e.destination.startsWith('+')) this.prefixes.set(scope, [...(this.prefixes.get(scope) ?? []), e]);
      else this.named.set(`${scope}|${e.destination}`, e);
    }
    for (const list of this.prefixes.values()) list.sort((a, b) => b.destination.length - a.destination.length);
  }

  /** The entry of `scope` for `to`; null when none matches. */
  find(scope: string, to: Pick<Destination, 'phoneNumber' | 'regionCode'>): T | null {
    const byPrefix = this.prefixes.get(scope)?.find((e) => to.phoneNumber.startsWith(e.destination));
    if (byPrefix) return byPrefix;
    const byCountry = to.regionCode === null ? undefined : this.named.get(`${scope}|${to.regionCode}`);
    return byCountry ?? this.named.get(`${scope}|${defaultDestination}`) ?? null;
  }
}
