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
 * Why this number's country may not be verified, or null when it may: the service-wide list first, then the
 * client's own (which narrows it). Pure and synchronous: a create asks it before anything is counted or written.
 */
export function countryRefused(phone: Pick<PhoneNumber, 'region'>, policy: DestinationPolicy, clientCountries: readonly string[] | null): string | null {
  const region = phone.region ?? 'no country';
  const global = policy.allowedCountries;
  if (global !== null && (phone.region === null || !global.includes(phone.region))) {
    return `numbers of ${region} are not among the service's allowed countries (ALLOWED_COUNTRIES: ${global.join(', ')})`;
  }
  if (clientCountries !== null && (phone.region === null || !clientCountries.includes(phone.region))) {
    return `numbers of ${region} are not among this client's allowed countries (${clientCountries.join(', ') || 'none'})`;
  }
  return null;
}

/** Why this number's line type is refused (BLOCKED_LINE_TYPES), or null when it is not. */
export function lineTypeRefused(phone: Pick<PhoneNumber, 'e164'>, policy: DestinationPolicy): string | null {
  if (policy.blockedLineTypes.length === 0) return null;
  const type = lineTypeOf(phone.e164);
  return policy.blockedLineTypes.includes(type) ? `${type} numbers are refused (BLOCKED_LINE_TYPES: ${policy.blockedLineTypes.join(', ')})` : null;
}

/** Why this number may not be verified, naming the rule and what it refused, or null when it may: the country first. */
export function destinationRefused(
  phone: Pick<PhoneNumber, 'region' | 'e164'>,
  policy: DestinationPolicy,
  clientCountries: readonly string[] | null,
): { readonly rule: 'countries' | 'line-types'; readonly detail: string } | null {
  const country = countryRefused(phone, policy, clientCountries);
  if (country !== null) return { rule: 'countries', detail: country };
  const line = lineTypeRefused(phone, policy);
  return line === null ? null : { rule: 'line-types', detail: line };
}
