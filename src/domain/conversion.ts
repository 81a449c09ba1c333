/**
 * Conversion (contract 10): pumped numbers never verify, so a country whose codes, through one provider, are
 * seldom typed back is throttled to the prefix limit, whoever asks, until the throttle ends or is lifted.
 */

/** MIN_CONVERSION on at least MIN_CONVERSION_SAMPLE sends over the last hour; a throttle lasts PREFIX_BLOCK_SECONDS. */
export interface ConversionPolicy {
  /** 0 turns conversion throttling off. */
  readonly minConversion: number;
  readonly minSample: number;
  readonly windowSeconds: number;
  readonly throttleSeconds: number;
  /**
   * CONVERSION_SHORT_WINDOW_SECONDS (0: off) on at least MIN_CONVERSION_SHORT_SAMPLE sends: the same
   * MIN_CONVERSION for a country over its last minute or so, beside the hour. An hour of ordinary traffic dilutes an attack's
   * first half hour or more; the last minutes hold mostly the attack.
   */
  readonly shortWindowSeconds?: number;
  readonly shortMinSample?: number;
  /**
   * MIN_RESEND_SAMPLE (0 or absent: off): resends a client needs within the short window before their conversion
   * is judged, and UNKNOWN_USER_RESENDS: what a code of a user with no verified history may be resent while the
   * client's resends are throttled.
   */
  readonly resendMinSample?: number;
  readonly unknownUserResends?: number;
}

/**
 * The short window ends this long ago: a code is typed back within a minute or so, so the youngest sends read as
 * unverified whoever made them, and a burst of real sign-ups would look like an attack. Half a minute on, a third
 * or more of them are typed (the pumping simulation's users type 5 to 60 s after asking), well over MIN_CONVERSION.
 */
export const shortSettleSeconds = 30;

/** The short window's bounds at `now`: the sends created in (since, until] are judged. */
export function shortWindowAt(now: Date, policy: ConversionPolicy): { readonly since: Date; readonly until: Date } | null {
  if (!policy.shortWindowSeconds) return null;
  const until = new Date(now.getTime() - shortSettleSeconds * 1000);
  return { since: new Date(until.getTime() - policy.shortWindowSeconds * 1000), until };
}

/** Sends and verified codes over the short window, beside the hour's. */
export interface RecentTraffic {
  readonly sends: number;
  readonly verified: number;
}

/** The hour the contract speaks of. */
export const conversionWindowSeconds = 3600;

/**
 * Where a code went: the number's country (ISO 3166 alpha-2, 001 for none) and calling code, its mobile network
 * where the number metadata names one ('' where it does not: those numbers of the country are judged together), and
 * the provider. Pumping through one network throttles that network, not its country's others (contract 18).
 */
export interface Route {
  readonly regionCode: string;
  readonly countryCode: string;
  readonly network: string;
  readonly provider: string;
}

/** A route's verifications within the window: sent through the provider, delivered, verified. */
export interface RouteTraffic extends Route {
  readonly sends: number;
  readonly delivered: number;
  readonly verified: number;
  /** The short window's part of them, when it is on. */
  readonly recent?: RecentTraffic;
}

/** A throttle in force: its route, since when, until when, and the figures that started it. */
export interface Throttle extends Route {
  readonly throttledAt: Date;
  readonly throttledUntil: Date;
  readonly sends: number;
  readonly verified: number;
}

/** Verified over sent; 1 with nothing sent (no evidence against a route). */
export function conversionOf(t: Pick<RouteTraffic, 'sends' | 'verified'>): number {
  return t.sends === 0 ? 1 : t.verified / t.sends;
}

/**
 * Traffic that converts too little, over the hour on MIN_CONVERSION_SAMPLE sends or else over the short window on
 * its own sample, with the figures that tripped it (a throttle keeps them); null when it converts well enough.
 */
function tripped<T extends { readonly sends: number; readonly verified: number; readonly recent?: RecentTraffic }>(t: T, policy: ConversionPolicy): T | null {
  if (t.sends >= policy.minSample && conversionOf(t) < policy.minConversion) return t;
  const recent = t.recent;
  if (recent && policy.shortWindowSeconds && recent.sends >= (policy.shortMinSample ?? policy.minSample) && conversionOf(recent) < policy.minConversion) {
    return { ...t, sends: recent.sends, verified: recent.verified };
  }
  return null;
}

/** The routes to throttle: enough sends to judge, and too few of them verified. */
export function underConverting(traffic: readonly RouteTraffic[], policy: ConversionPolicy): RouteTraffic[] {
  if (policy.minConversion === 0) return [];
  return traffic.flatMap((t) => tripped(t, policy) ?? []);
}

export function routeKey(r: Route): string {
  return `${r.regionCode}|${r.countryCode}|${r.network}|${r.provider}`;
}

/**
 * A throttled country as a refusal names it: the country and, where the throttle is one mobile network's, that
 * network as number lookup names it (its `carrier`). Not the provider: that is the operator's business.
 */
export interface ThrottledRoute {
  readonly regionCode: string;
  readonly carrier?: string;
}

export function throttledRoute(t: Route): ThrottledRoute {
  return { regionCode: t.regionCode, ...(t.network !== '' && { carrier: t.network }) };
}

/** The throttles in force at one time, as one process last read them. */
export class Throttles {
  private readonly byRoute: ReadonlyMap<string, Throttle>;

  constructor(throttles: readonly Throttle[]) {
    this.byRoute = new Map(throttles.map((t) => [routeKey(t), t]));
  }

  /** The throttle on a route still in force at `now`, if any. */
  on(route: Route, now: Date): Throttle | null {
    const t = this.byRoute.get(routeKey(route));
    return t && t.throttledUntil > now ? t : null;
  }
}

/**
 * A client's sends and verifications within the window, across every country (contract 14): an attack spread
 * thin over many countries stays under each country's sample, but not under its client's.
 */
export interface ClientTraffic {
  readonly clientId: string;
  readonly sends: number;
  readonly verified: number;
}

/** A client throttled for its conversion across all countries: its creates are capped at the prefix limit. */
export interface ClientThrottle extends ClientTraffic {
  readonly throttledAt: Date;
  readonly throttledUntil: Date;
}

/**
 * A client's figures count only verifications at least this old: users type a code within a minute or two, so a
 * younger one still PENDING says nothing yet. Judged at once, a client's first couple of hundred sends read as
 * unverified and throttled it for PREFIX_BLOCK_SECONDS (the bench's pumping simulation refused 97 % of its
 * ordinary users so). An attack is then judged in its first few minutes, not its first seconds.
 */
export const clientSettleSeconds = 120;

/** The clients to throttle: enough sends to judge, and too few of them verified. */
/**
 * A client is judged over the hour only. A client throttle lets only known users through, every country alike,
 * for PREFIX_BLOCK_SECONDS: judged over a short window too, it tripped on the spread attack's first minute in the
 * pumping simulation and refused 492 new users (10.3 % of ordinary creates), against 157 attack sends saved.
 */
export function underConvertingClients(traffic: readonly ClientTraffic[], policy: ConversionPolicy): ClientTraffic[] {
  if (policy.minConversion === 0) return [];
  return traffic.filter((t) => t.sends >= policy.minSample && conversionOf(t) < policy.minConversion);
}

/** A throttled country's creates within the prefix window, the oldest of them first. */
export interface ThrottledState {
  readonly recentCreates: number;
  readonly oldest: Date | null;
  /**
   * Read for a country, not a client: its codes verified under its throttle, and the sends of the creates its local
   * room let through that are not verified (those still being typed among them).
   */
  readonly localRoom?: { readonly verified: number; readonly unverified: number };
}

export type ThrottleDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * Throttled to the prefix limit: at most `count` creates per `windowSeconds` towards the country; past that, the
 * wait is until the oldest of them leaves the window.
 */
export function decideThrottled(state: ThrottledState, now: Date, limit: { readonly count: number; readonly windowSeconds: number }): ThrottleDecision {
  if (state.recentCreates < limit.count) return { allowed: true };
  const frees = (state.oldest?.getTime() ?? now.getTime()) + limit.windowSeconds * 1000;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((frees - now.getTime()) / 1000)) };
}

/**
 * Unverified codes a throttled country's local room holds for each of its codes verified under the throttle. The room
 * holds codes, not users: a local user who types their code gives its place back, so it need only hold those being
 * typed and the few never typed. A country's new users are about one create in eight in the pumping simulation
 * (new, with no history on their network); a tenth of its verified codes holds their untyped ones with room to
 * spare from the first minutes of a throttle on, and is all an attack from the country's own addresses can take.
 */
export const localRoomPerVerified = 0.1;

/**
 * Whether a country throttle still has room for a local user (their address is in their number's country) with no
 * verified history, past the prefix limit: the creates it let through so (its local room) hold fewer unverified
 * sends than a tenth of the codes verified in the country under the throttle, or than the prefix limit while
 * those are few. The country's new users, who verify, keep their codes while an attack from a proxy pool abroad is
 * refused as before; one from addresses in the country takes at most that room, and then local users are refused
 * with it, as every unknown user was before.
 */
export function hasLocalRoom(state: ThrottledState, limit: { readonly count: number }): boolean {
  if (state.localRoom === undefined) return false;
  return state.localRoom.unverified < Math.max(limit.count, Math.floor(state.localRoom.verified * localRoomPerVerified));
}

/**
 * A client's resends made within the short window (before its last half minute, as a country's sends are judged)
 * and how many of the codes they resent were verified: an attack resends codes it never types back, while a real
 * user resends because a code is late, and then types it. A throttle served starts the count afresh.
 */
export interface ResendTraffic {
  readonly clientId: string;
  readonly resends: number;
  readonly verified: number;
}

/**
 * A client whose resends converted under MIN_CONVERSION: for PREFIX_BLOCK_SECONDS, a code of a user with no
 * verified history (number, address, network or device) is resent at most UNKNOWN_USER_RESENDS times.
 */
export interface ResendThrottle extends ResendTraffic {
  readonly throttledAt: Date;
  readonly throttledUntil: Date;
}

/** The clients whose resends to throttle: at least MIN_RESEND_SAMPLE of them in the short window, too few verified. */
export function underConvertingResends(traffic: readonly ResendTraffic[], policy: ConversionPolicy): ResendTraffic[] {
  if (policy.minConversion === 0 || !policy.resendMinSample || !policy.shortWindowSeconds) return [];
  const sample = policy.resendMinSample;
  return traffic.filter((t) => t.resends >= sample && conversionOf({ sends: t.resends, verified: t.verified }) < policy.minConversion);
}
