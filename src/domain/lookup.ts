import type { LineType } from './line-type.js';

/** A number lookup (contract 11): what the metadata said of a number, kept for its client to read back. */
export interface Lookup {
  readonly id: string;
  readonly clientId: string;
  readonly createdAt: Date;
  /** E.164; for a number that is not valid, as RefusedPhone reads it. */
  readonly phoneNumber: string;
  /** The country code asked about, +NNN. */
  readonly countryCode: string;
  readonly regionCode: string | null;
  readonly valid: boolean;
  readonly lineType: LineType;
  readonly carrier: string | null;
  readonly timeZones: readonly string[];
}
