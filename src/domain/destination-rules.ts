import { lineTypeOf, type LineType } from './line-type.js';
import type { PhoneNumber } from './phone.js';

/** The service-wide rules on where codes may go (contract 10), from ALLOWED_COUNTRIES and BLOCKED_LINE_TYPES. */
export interface DestinationPolicy {
  /** ISO 3166 alpha-2 regions whose numbers may be verified; null: all. */
  readonly allowedCountries: readonly string[] | null;
  /** Line types refused whatever the country (premium-rate and the like: the usual targets of SMS pumping). */
  readonly blockedLineTypes: readonly LineType[];
}

/**
 * Why this number may not be verified, naming the rule and the value it refused, or null when it may. Pure and
 * synchronous: create asks it before anything is counted or written. The service-wide country list is asked
 * first, then the client's own (which narrows it), then the line type.
 */
export function destinationRefused(
  phone: PhoneNumber,
  policy: DestinationPolicy,
  clientCountries: readonly string[] | null,
): { readonly rule: 'countries' | 'line-types'; readonly detail: string } | null {
  const region = phone.region ?? 'no country';
  const global = policy.allowedCountries;
  if (global !== null && (phone.region === null || !global.includes(phone.region))) {
    return { rule: 'countries', detail: `numbers of ${region} are not among the service's allowed countries (ALLOWED_COUNTRIES: ${global.join(', ')})` };
  }
  if (clientCountries !== null && (phone.region === null || !clientCountries.includes(phone.region))) {
    return { rule: 'countries', detail: `numbers of ${region} are not among this client's allowed countries (${clientCountries.join(', ') || 'none'})` };
  }
  if (policy.blockedLineTypes.length > 0) {
    const type = lineTypeOf(phone.e164);
    if (policy.blockedLineTypes.includes(type)) return { rule: 'line-types', detail: `${type} numbers are refused (BLOCKED_LINE_TYPES: ${policy.blockedLineTypes.join(', ')})` };
  }
  return null;
}
