import { channelOfDelivery } from '../channel-driver.js';
import { decideThrottled, hasLocalRoom, throttledRoute, type ClientThrottle, type Throttle } from '../conversion.js';
import { sendRule } from './send-rule.js';
import { judgesTheUser, knownUserAsk, secondsBefore, whereFrom } from './rule-deps.js';

interface Throttles {
  /** The throttle on the country (and network) of the route the first send takes. */
  readonly country: Throttle | null;
  /** The throttle on the client for its conversion across all countries (contract 14). */
  readonly client: ClientThrottle | null;
}

function later(a: Date, b: Date): Date {
  return a > b ? a : b;
}

/**
 * A country (or one of its networks) or a client throttled for its conversion (contracts 10, 14, 18), read from
 * the conversion watch: capped at the prefix limit, counting only the creates made under the throttle. A known
 * user is not held by it; a user whose address is in their number's country keeps some room under a country
 * throttle (the local room), an attack's proxies abroad do not; a client that asks a CAPTCHA keeps none (a
 * person passes it, a script does not, and an attack from proxies in the country would take the room).
 */
export const conversionRule = sendRule<Throttles>({
  rule: 'conversion',
  prepare(s, _j, d, v) {
    // Throttled to the prefix limit: with prefix velocity off there is none to throttle to.
    const { conversion } = d;
    if (s.kind !== 'create' || d.policy.prefix.count === 0 || !judgesTheUser(s) || !conversion || v === null) return null;
    const { regionCode } = v;
    const country =
      regionCode === null
        ? null
        : conversion.throttleOn({ regionCode, countryCode: v.countryCode, network: v.network ?? '', provider: conversion.firstProvider(channelOfDelivery(v.delivery.channel), v) }, s.now);
    const client = conversion.clientThrottleOn?.(s.clientId, s.now) ?? null;
    return country === null && client === null ? null : { country, client };
  },
  asks(s, _j, t, d) {
    if (t === null) return null;
    const window = secondsBefore(s.now, d.policy.prefix.windowSeconds);
    return {
      // A throttle counts only the creates made under it, as a lifted block counts only those after it.
      throttled: t.country && { regionCode: t.country.regionCode, countryCode: t.country.countryCode, network: t.country.network, since: later(window, t.country.throttledAt) },
      clientThrottled: t.client && { since: later(window, t.client.throttledAt) },
      ...knownUserAsk(s),
    };
  },
  decide(s, j, read, t, d) {
    if (read.kind !== 'create' || t === null) return null;
    const { history, known } = read;
    const { prefix } = d.policy;
    const plain = history.throttled && !known ? decideThrottled(history.throttled, s.now, prefix) : null;
    j.localRoom =
      plain !== null &&
      !plain.allowed &&
      history.throttled !== null &&
      j.challenge !== 'ask' &&
      whereFrom(d, s.signals?.ip?.address ?? null, s.phone.region) === 'local' &&
      hasLocalRoom(history.throttled, prefix);
    const country = j.localRoom ? null : plain;
    const refused = country !== null && !country.allowed ? country : !known && history.clientThrottled ? decideThrottled(history.clientThrottled, s.now, prefix) : null;
    if (refused === null || refused.allowed) return null;
    const onCountry = country !== null && !country.allowed && t.country !== null;
    return {
      rule: 'conversion',
      passable: true,
      refusal: { kind: 'rate-limited', reason: 'conversion', retryAfterSeconds: refused.retryAfterSeconds, ...(onCountry && t.country && { throttled: throttledRoute(t.country) }) },
    };
  },
});
