import { getCountries, getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** A phone number that libphonenumber's full metadata accepts as valid. */
export interface PhoneNumber {
  /** E.164, e.g. +2348012345678. */
  readonly e164: string;
  /** Country calling code with its plus, e.g. +234. */
  readonly countryCode: string;
  /** National significant number in local format (trunk prefix included, digits only), e.g. 08012345678. */
  readonly local: string;
  /** ISO 3166 alpha-2 region of the number (NG), or null for a non-geographic one (+800, +882...). */
  readonly region: string | null;
}

const countryCodePattern = /^\+[1-9]\d{0,2}$/;
const localDigits = /^\d{1,17}$/;

/** Parses a country code (+NNN) and a local number (digits, trunk prefix allowed); null when not a valid number. */
export function parsePhone(countryCode: string, phoneNumber: string): PhoneNumber | null {
  if (!countryCodePattern.test(countryCode) || !localDigits.test(phoneNumber)) return null;
  let parsed: ReturnType<typeof parsePhoneNumberFromString>;
  try {
    parsed = parsePhoneNumberFromString(phoneNumber, { defaultCallingCode: countryCode.slice(1) });
  } catch {
    // libphonenumber throws, rather than returning nothing, for a calling code no country uses (e.g. +999).
    return null;
  }
  if (!parsed || !parsed.isValid() || `+${parsed.countryCallingCode}` !== countryCode) return null;
  return fromParsed(parsed);
}

/** Whether `text` has the form of an E.164 number: `+`, then 2 to 15 digits, the first not 0; nothing else. */
export function isE164Form(text: string): boolean {
  return /^\+[1-9]\d{1,14}$/.test(text);
}

/** Parses an E.164 number (+ and digits); null when not a valid number. */
export function parseE164(e164: string): PhoneNumber | null {
  if (!/^\+[1-9]\d{4,15}$/.test(e164)) return null;
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed || !parsed.isValid()) return null;
  return fromParsed(parsed);
}

/**
 * How the number a user is contacted from reads to them (contract 3.4 `pairedNumber`): in the local format of its
 * country when the user's number is under the same calling code, else in E.164. A national format is only dialled,
 * and only recognised, inside its own numbering plan: to a Kenyan phone a Nigerian 0803... is no number at all, and
 * the phone itself shows the call as +234.... A calling code, not a region, is the plan: +1 and +7 span countries
 * that dial one another nationally.
 */
export function shownTo(from: PhoneNumber, recipient: PhoneNumber): string {
  return from.countryCode === recipient.countryCode ? from.local : from.e164;
}

/**
 * An E.164 number (+ and digits) read as far as libphonenumber can, valid or not: for numbers the service makes
 * itself and only shows (a test number's caller id), never for a destination.
 */
export function readE164(e164: string): PhoneNumber {
  const parsed = parsePhoneNumberFromString(e164);
  if (parsed) return fromParsed(parsed);
  return { e164, countryCode: e164.slice(0, 4), local: e164.slice(1), region: null };
}

/** How a number that parsePhone refused reads, for an answer that describes it rather than refusing it. */
export interface RefusedPhone {
  /**
   * The calling code and the national number as libphonenumber reads them (it drops a trunk prefix only when
   * what follows could be a number of the country: +234 08000 reads +23408000), or, when it cannot read the
   * number at all, the country code and the digits as given.
   */
  readonly e164: string;
  /** The region (ISO 3166 alpha-2) when only one region uses the calling code (+234: NG; +1, +44: null). */
  readonly regionCode: string | null;
}

/** Reads a well-formed number that is not valid for its country code (see RefusedPhone). */
export function readRefusedPhone(countryCode: string, phoneNumber: string): RefusedPhone {
  const callingCode = countryCode.slice(1);
  let parsed: ReturnType<typeof parsePhoneNumberFromString>;
  try {
    parsed = parsePhoneNumberFromString(phoneNumber, { defaultCallingCode: callingCode });
  } catch {
    // A calling code no country uses (see parsePhone).
    parsed = undefined;
  }
  const regions = regionsOf(callingCode);
  return {
    e164: parsed && parsed.countryCallingCode === callingCode ? parsed.number : `${countryCode}${phoneNumber}`,
    regionCode: regions.length === 1 ? (regions[0] ?? null) : null,
  };
}

/**
 * The region every valid number of a calling code is in, when the code alone says it: its one region (+234: NG),
 * or 001 when no region uses it (+800, +882: a valid number under such a code is non-geographic; this does not
 * check that the code is in use at all); null when regions share it (+1, +44, +7).
 */
export function regionOfCallingCode(countryCode: string): string | null {
  const regions = regionsOf(countryCode.replace(/^\+/, ''));
  if (regions.length === 0) return nonGeographicRegion;
  return regions.length === 1 ? (regions[0] ?? null) : null;
}

/** Whether `code` is a country (ISO 3166 alpha-2, upper case) that the number metadata knows. */
export function isRegion(code: string): boolean {
  return (getCountries() as readonly string[]).includes(code);
}

/** CLDR's "world", libphonenumber's region for non-geographic numbering plans (+800, +882, +883...). */
export const nonGeographicRegion = '001';

let regionsByCallingCode: Map<string, string[]> | null = null;

/** The regions that use a calling code, from the same metadata; built at first use. */
function regionsOf(callingCode: string): readonly string[] {
  if (!regionsByCallingCode) {
    const built = new Map<string, string[]>();
    for (const region of getCountries()) {
      const code = getCountryCallingCode(region);
      built.set(code, [...(built.get(code) ?? []), region]);
    }
    regionsByCallingCode = built;
  }
  return regionsByCallingCode.get(callingCode) ?? [];
}

function fromParsed(parsed: NonNullable<ReturnType<typeof parsePhoneNumberFromString>>): PhoneNumber {
  return {
    e164: parsed.number,
    countryCode: `+${parsed.countryCallingCode}`,
    local: parsed.formatNational().replace(/\D/g, ''),
    region: parsed.country ?? null,
  };
}

/**
 * A create's or lookup's number as the caller gave it (contract 3.1): a country code and a local number, or a
 * whole E.164 number (`+` and digits), with or without a country code, which must then agree with it.
 */
export type NumberInput =
  | { readonly kind: 'split'; readonly countryCode: string; readonly phoneNumber: string }
  /** Local digits and no country code: nothing says which country they belong to. */
  | { readonly kind: 'no-country-code' }
  /** `+` and digits whose country calling code the metadata does not know. */
  | { readonly kind: 'unreadable' }
  | { readonly kind: 'disagrees'; readonly countryCode: string; readonly callingCode: string };

export function splitNumberInput(countryCode: string | undefined, phoneNumber: string): NumberInput {
  if (!phoneNumber.startsWith('+')) {
    return countryCode === undefined ? { kind: 'no-country-code' } : { kind: 'split', countryCode, phoneNumber };
  }
  let parsed: ReturnType<typeof parsePhoneNumberFromString>;
  try {
    parsed = parsePhoneNumberFromString(phoneNumber);
  } catch {
    parsed = undefined;
  }
  if (!parsed) return { kind: 'unreadable' };
  const callingCode = `+${parsed.countryCallingCode}`;
  if (countryCode !== undefined && countryCode !== callingCode) return { kind: 'disagrees', countryCode, callingCode };
  return { kind: 'split', countryCode: callingCode, phoneNumber: parsed.nationalNumber };
}
