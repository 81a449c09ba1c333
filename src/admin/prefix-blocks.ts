/** A prefix blocked by prefix velocity (contract 10), as `otp-service blocks list` shows it. */
export interface PrefixBlock {
  readonly prefix: string;
  readonly blockedAt: string;
  readonly blockedUntil: string;
}

/** The blocks in force, for the operator commands. */
export interface PrefixBlocks {
  /** Blocks still in force at `now`, newest first. */
  list(now: Date): Promise<PrefixBlock[]>;
  /** Ends a block now (creates towards the prefix count afresh from now); false when it had none in force. */
  lift(prefix: string, now: Date): Promise<boolean>;
}

/** A country throttled for its conversion through a provider (contract 10), as `otp-service blocks list` shows it. */
export interface CountryThrottle {
  readonly country: string;
  readonly countryCode: string;
  readonly provider: string;
  readonly blockedAt: string;
  readonly blockedUntil: string;
  /** The last hour's figures that started it. */
  readonly sends: number;
  readonly verified: number;
}

/** The country throttles in force, for the operator commands. */
export interface CountryThrottles {
  list(now: Date): Promise<CountryThrottle[]>;
  /** Ends a country's throttles (every provider) now; how many were in force. */
  lift(regionCode: string, now: Date): Promise<number>;
}
