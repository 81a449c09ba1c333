import type { ClientDailyTraffic } from './stats.js';

/** Which verifications to count: one client's, or every client's (null), created in [since, before). */
export interface TrafficQuery {
  readonly clientId: string | null;
  readonly since: Date;
  readonly before: Date;
  /** Also per provider of the latest send (the operator's figures); absent or false: not. */
  readonly byProvider?: boolean;
}

/** Storage of the traffic figures (port): counts of stored verifications, test numbers aside. */
export interface StatsStore {
  /**
   * Per client, UTC day of creation, region and calling code: the sends asked for (creates and resends), the
   * verifications delivered and those verified. Rows made before regions were stored carry regionCode null, in
   * groups of their own; days without traffic have no row; in no particular order.
   */
  dailyTraffic(query: TrafficQuery): Promise<ClientDailyTraffic[]>;
}
