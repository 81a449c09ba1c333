/**
 * Block and allow lists (contract 14): numbers, or prefixes of them, service-wide or for one client. A block
 * refuses a create (403 NUMBER_NOT_ALLOWED, rule `blocked`) after the country and number-type rules; an allowed
 * number skips the per-number limits and cool-down, prefix velocity, the signal limits and conversion
 * throttling, never the daily quota, the CAPTCHA, the countries, number types or blocks.
 */

export type ListKind = 'block' | 'allow';

/** One entry, as `otp-service lists show --json` prints it. */
export interface ListEntry {
  readonly kind: ListKind;
  /** E.164 digits with `+`: a whole number, or a prefix of one. */
  readonly value: string;
  /** Null: service-wide. */
  readonly clientId: string | null;
  readonly note: string | null;
  readonly createdAt: Date;
}

/** A list value as the operator may write it: `+` and 1 to 15 digits, the first not 0. */
export function parseListValue(text: string): string | null {
  const value = text.replace(/[\s()-]/g, '');
  return /^\+[1-9][0-9]{0,14}$/.test(value) ? value : null;
}

/** The lists in force, as one process last read them; a create asks them without reading the database. */
export class NumberLists {
  private readonly byKind: Readonly<Record<ListKind, ReadonlySet<string>>>;

  constructor(entries: readonly ListEntry[]) {
    const sets: Record<ListKind, Set<string>> = { block: new Set(), allow: new Set() };
    for (const e of entries) sets[e.kind].add(keyOf(e.clientId, e.value));
    this.byKind = sets;
  }

  /** The blocked value (number or prefix) `e164` falls under for `clientId`, or null. */
  blockedBy(e164: string, clientId: string): string | null {
    return this.match('block', e164, clientId);
  }

  /** Whether `e164` is allowed for `clientId`, by a service-wide entry or one of the client's. */
  allows(e164: string, clientId: string): boolean {
    return this.match('allow', e164, clientId) !== null;
  }

  /** The shortest listed value that `e164` starts with, the client's own or a service-wide one. */
  private match(kind: ListKind, e164: string, clientId: string): string | null {
    const set = this.byKind[kind];
    if (set.size === 0) return null;
    for (let end = 2; end <= e164.length; end += 1) {
      const value = e164.slice(0, end);
      if (set.has(keyOf(null, value)) || set.has(keyOf(clientId, value))) return value;
    }
    return null;
  }
}

function keyOf(clientId: string | null, value: string): string {
  return `${clientId ?? '*'}|${value}`;
}

/** Where the lists are kept (port; src/store/number-list-store.ts). */
export interface NumberListStore {
  /** Adds an entry, or gives an existing one (same kind, value and client) the new note; true when it is new. */
  add(entry: ListEntry): Promise<boolean>;
  /** Removes an entry; false when there was none. */
  remove(kind: ListKind, value: string, clientId: string | null): Promise<boolean>;
  /** Every entry, oldest first. */
  all(): Promise<ListEntry[]>;
}

