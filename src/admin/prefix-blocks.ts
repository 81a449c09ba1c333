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
  /** The mobile network throttled, as number lookup names it (its carrier); absent: the country's numbers of no known network. */
  readonly network?: string;
  readonly provider: string;
  readonly blockedAt: string;
  readonly blockedUntil: string;
  /** The last hour's figures that started it. */
  readonly sends: number;
  readonly verified: number;
}

/** A client throttled for its conversion across all countries (contract 14), as `otp-service blocks list` shows it. */
export interface ClientThrottleView {
  readonly clientId: string;
  readonly blockedAt: string;
  readonly blockedUntil: string;
  readonly sends: number;
  readonly verified: number;
  /** `resends`: the client's resends are throttled (MIN_RESEND_SAMPLE); `sends` are then its resends judged. */
  readonly of?: 'resends';
}

/** The country (and client) throttles in force, for the operator commands. */
export interface CountryThrottles {
  list(now: Date): Promise<CountryThrottle[]>;
  /** Ends a country's throttles (every provider) now; how many were in force. */
  lift(regionCode: string, now: Date): Promise<number>;
  /** Clients throttled across all countries, and clients whose resends are throttled. */
  listClients(now: Date): Promise<ClientThrottleView[]>;
  /** Ends a client's throttle now; false when none was in force. */
  liftClient(clientId: string, now: Date): Promise<boolean>;
}
