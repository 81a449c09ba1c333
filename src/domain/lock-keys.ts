/**
 * The names creates and resends serialise on, one spelling for both places they count: scripts that share a
 * name never run in one group (a group reads before it writes), and the transaction holds an advisory lock on
 * each across instances (the counts behind the limits are then exact).
 */
export const lockKeys = {
  /** A client's creates towards one number (the phone limits). */
  phone: (clientId: string, e164: string): string => `${clientId}|${e164}`,
  /** Creates towards a prefix, whoever asks (prefix velocity). */
  prefix: (prefix: string): string => `prefix|${prefix}`,
  /** Creates towards a throttled country's network, whatever the provider: its creates are counted together (conversion). */
  country: (c: { readonly regionCode: string; readonly countryCode: string; readonly network: string }): string =>
    `country|${c.regionCode}|${c.countryCode}|${c.network}`,
  /** A client throttled for its conversion across all countries: its creates are counted together. */
  clientThrottle: (clientId: string): string => `client-throttle|${clientId}`,
  /** A client's creates from one address, network or device (the signal limits, contract 14). */
  signal: (clientId: string, kind: string, value: string): string => `signal|${kind}|${clientId}|${value}`,
} as const;
