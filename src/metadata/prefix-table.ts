/**
 * A table from digit prefixes to values, read as Google's prefix files are: the value of the longest prefix of a
 * number that the table holds.
 */
export class PrefixTable {
  private readonly longestKey: number;

  constructor(private readonly entries: ReadonlyMap<string, string>) {
    this.longestKey = Math.max(0, ...[...entries.keys()].map((k) => k.length));
  }

  static readonly empty = new PrefixTable(new Map());

  get size(): number {
    return this.entries.size;
  }

  /** The value of the longest prefix of `digits` in the table, or null when none is. */
  lookup(digits: string): string | null {
    for (let length = Math.min(digits.length, this.longestKey); length > 0; length--) {
      const value = this.entries.get(digits.slice(0, length));
      if (value !== undefined) return value;
    }
    return null;
  }
}

/**
 * A table from a decoded data file, whose keys must be digits and whose values must be text: anything else means
 * the file is not what this reader expects (a changed format), which is an error, never a silently empty answer.
 */
export function prefixTableFrom(document: Readonly<Record<string, unknown>>, source: string): PrefixTable {
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(document)) {
    if (!/^\d{1,20}$/.test(key) || typeof value !== 'string') {
      throw new Error(`${source}: unexpected entry ${JSON.stringify(key).slice(0, 40)}; not a prefix table`);
    }
    entries.set(key, value);
  }
  return new PrefixTable(entries);
}
