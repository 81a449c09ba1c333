import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Reader, type Response } from 'mmdb-lib';

/**
 * The country an end user's address is in, from an IP-to-country database in MaxMind's format (MMDB), read on this
 * machine: no network. A lookup is a walk of the database's tree in memory (a few microseconds).
 */
export interface AddressCountries {
  /** The ISO 3166-1 alpha-2 code of the country `address` (canonical IPv4 or IPv6 text) is in; null when unknown. */
  countryOf(address: string): string | null;
  /** When the database was built, for `otp-service` and the start's log. */
  readonly builtAt: Date;
}

/**
 * The database shipped with the service: ip-location-db's geo-whois-asn-country (country per range, from the five
 * regional registries' whois and ASN data and providers' geofeeds; CC0 tables over CC BY 4.0 data of the NRO). It
 * is the package's last npm snapshot: point IP_COUNTRY_DATABASE at a newer MMDB to keep it current.
 */
export function shippedCountryDatabase(): string {
  const manifest = createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json');
  return path.join(path.dirname(manifest), 'geo-whois-asn-country.mmdb');
}

/** ip-location-db's databases name the country `country_code`; MaxMind's GeoLite2 and DB-IP's `country.iso_code`. */
type CountryRecord = Response & { readonly country_code?: unknown; readonly country?: { readonly iso_code?: unknown } };

/** One reader per file and process: the database is read once, whatever number of services a process builds. */
const opened = new Map<string, AddressCountries>();

/**
 * Reads an MMDB file whose records name a country either way; throws (at start, where settings fail fast) when the
 * file is missing or not such a database.
 */
export function openCountryDatabase(file: string): AddressCountries {
  const known = opened.get(file);
  if (known) return known;
  const reader = new Reader<CountryRecord>(readFileSync(file));
  if (!/country|city/i.test(reader.metadata.databaseType)) {
    throw new Error(`${file} is a ${reader.metadata.databaseType} database, not one of countries`);
  }
  const countries: AddressCountries = {
    builtAt: reader.metadata.buildEpoch,
    countryOf(address) {
      let record: CountryRecord | null;
      try {
        record = reader.get(address);
      } catch {
        // Text the reader does not take as an address: no country, as for an address the data does not hold.
        return null;
      }
      const code = record?.country_code ?? record?.country?.iso_code;
      return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null;
    },
  };
  opened.set(file, countries);
  return countries;
}

/** IP_COUNTRY_DATABASE: the shipped database, another MMDB file, or none (`off`). */
export function addressCountriesOf(setting: string): AddressCountries | null {
  if (setting === 'off') return null;
  return openCountryDatabase(setting === 'shipped' ? shippedCountryDatabase() : setting);
}
