/**
 * NEW_COUNTRY_LIMIT_COUNT (issue 20): pumping spread thin over many countries stays under each country's
 * conversion sample and is diluted in its client's, but it goes where the client has no users. So towards a
 * country where none of a client's codes was verified lately, the client's sends are capped per UTC hour, until
 * one is verified there; numbers, addresses, networks and devices with verified codes go past the cap.
 */

/** The cap's window: a UTC hour. */
export const hourMs = 3_600_000;

/** The keys of windows an hour long: shared-counter pruning keeps them until they are over. */
export const hourWindowPrefix = 'hour|';

/** What the cap counts under: one client's sends towards one country. */
export function newCountryKey(clientId: string, regionCode: string): string {
  return `${hourWindowPrefix}new-country|${clientId}|${regionCode}`;
}

/** The wait of a send refused by the cap: until the next UTC hour, at least one second. */
export function untilNextHour(now: Date): number {
  return Math.max(1, Math.ceil((hourMs - (now.getTime() % hourMs)) / 1000));
}

/** A window's quota shared by every instance, admitted one hit at a time (port; a QuotaLimiter implements it). */
export interface WindowQuota {
  /** True when one more hit of `key` fits in the window (and it is counted); `limit`: the window's, when it moves. */
  tryAcquire(key: string, limit?: number): Promise<boolean>;
  /** Gives back a hit `tryAcquire` admitted that was not used (the send was refused after all). */
  release(key: string): void;
}
