import type { LineType } from './line-type.js';

/** What the number metadata on the machine says about a number (contract 11). */
export interface NumberFacts {
  /** Whether the number is valid (libphonenumber, full metadata). */
  readonly valid: boolean;
  /** ISO 3166 alpha-2 region of the number, or null (a non-geographic number such as +800, or an unreadable one). */
  readonly regionCode: string | null;
  readonly lineType: LineType;
  /** Name in English of the carrier the number's range was first given to, or null when the data names none. */
  readonly carrier: string | null;
  /** IANA time zones of the number's range; empty when the data knows none. */
  readonly timeZones: readonly string[];
}

/**
 * Number metadata (port): line type, original carrier and time zones, read from data shipped with the service.
 * It never reaches the network, so a lookup takes as long as a file read at most.
 */
export interface NumberMetadata {
  /** Facts about an E.164 number; one that is not valid reads valid false, UNKNOWN, no carrier, no time zones. */
  describe(e164: string): Promise<NumberFacts>;
}
