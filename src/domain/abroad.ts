import { hourWindowPrefix } from './new-country.js';

/**
 * ABROAD_LIMIT_SHARE: an SMS pumping attack sends from a proxy pool, mostly abroad, and one that verifies a share of
 * its own codes holds a country's conversion over MIN_CONVERSION. A country's real new users ask from its own
 * addresses, all but a few (roaming, a VPN). So the creates towards a country by users with no verified history
 * whose address is in another country are capped per UTC hour, across clients, at a share of the codes verified in
 * the country over the last hour: room that grows with the country's real traffic, which an attack cannot fake
 * without verifying codes at that rate.
 */
export interface AbroadPolicy {
  /** The room's share of the codes verified in the country over the last hour; 0 turns the cap off. */
  readonly share: number;
  /** The least room per country per hour, however few codes were verified there (ABROAD_LIMIT_MIN). */
  readonly min: number;
}

/** What the cap counts under: creates from abroad towards one country, whoever the client. */
export function abroadKey(regionCode: string): string {
  return `${hourWindowPrefix}abroad|${regionCode}`;
}

/** The hour's room towards a country where `verified` codes were verified over the last hour. */
export function abroadRoom(verified: number, policy: AbroadPolicy): number {
  return Math.max(policy.min, Math.floor(verified * policy.share));
}
