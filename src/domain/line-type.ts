import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** What kind of line a number is, as libphonenumber's full metadata classes its range (contract 11). */
export const lineTypes = [
  'MOBILE',
  'FIXED_LINE',
  'FIXED_LINE_OR_MOBILE',
  'VOIP',
  'TOLL_FREE',
  'PREMIUM_RATE',
  'SHARED_COST',
  'UAN',
  'PAGER',
  'VOICEMAIL',
  'PERSONAL_NUMBER',
  'UNKNOWN',
] as const;

export type LineType = (typeof lineTypes)[number];

export function isLineType(value: string): value is LineType {
  return (lineTypes as readonly string[]).includes(value);
}

/**
 * The line type of an E.164 number: libphonenumber's own type (the names are the same), UNKNOWN when the number
 * is not valid or its range has no type. Pure and synchronous, so that a rule on number types (contract 10's
 * BLOCKED_LINE_TYPES) can ask it while it decides.
 */
export function lineTypeOf(e164: string): LineType {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed?.isValid()) return 'UNKNOWN';
  const type = parsed.getType();
  return type !== undefined && isLineType(type) ? type : 'UNKNOWN';
}
