import Big from 'big.js';

/**
 * Money as the service keeps it (contract 17): decimal strings (`0.0125`), summed exactly; one currency per
 * deployment (COST_CURRENCY, ISO 4217).
 */
export type Amount = string;

/** A price or a cost in some currency, as a provider reports it or a price sheet says it. */
export interface Money {
  readonly amount: Amount;
  readonly currency: string;
}

/** At most this many decimals: providers quote to 8 (Vonage's `0.03330000`), and a share of a cent to 4. */
const maxDecimals = 10;

/** An amount as written (`0.0125`, ` 12 `), normalised (`0.0125`, `12`); null when it is not a non-negative decimal. */
export function parseAmount(text: string): Amount | null {
  const trimmed = text.trim();
  if (!/^\d{1,12}(\.\d+)?$/.test(trimmed)) return null;
  const fraction = trimmed.split('.')[1] ?? '';
  if (fraction.replace(/0+$/, '').length > maxDecimals) return null;
  return new Big(trimmed).toFixed();
}

/** ISO 4217's shape: three capital letters. */
export function isCurrency(text: string): boolean {
  return /^[A-Z]{3}$/.test(text);
}

export const zero: Amount = '0';

export function sum(amounts: readonly Amount[]): Amount {
  return amounts.reduce((total, a) => total.plus(a), new Big(0)).toFixed();
}

/** `a` is more than `b`. */
export function exceeds(a: Amount, b: Amount): boolean {
  return new Big(a).gt(b);
}

/** `total` a piece, to 6 decimals (a share of a cent is what a cost per verified code tells apart); null for none. */
export function per(total: Amount, count: number): Amount | null {
  return count > 0 ? new Big(total).div(count).round(6, Big.roundHalfUp).toFixed() : null;
}

/** The largest of `amounts`, or 0 for none. */
export function largest(amounts: readonly Amount[]): Amount {
  return amounts.reduce((top, a) => (new Big(a).gt(top) ? a : top), zero);
}
