import type { ResendThrottle } from '../conversion.js';
import { sendRule, type Judgement, type Objection, type ResendRead, type Send } from './send-rule.js';
import { whereFrom, type RuleDeps } from './rule-deps.js';

/**
 * MIN_RESEND_SAMPLE: a client whose resends to users with no verified history convert badly has those resends
 * throttled. An attack resends codes it never types; a real user resends a late code, and is mostly known already
 * (the number, address, network or device verified before). The user is asked only past the unknown user's free
 * resends (UNKNOWN_USER_RESENDS) or, for the free ones, when the code's address may be abroad: those are a local
 * user's (an attack's proxies are anywhere; a user whose code is late is mostly where their number is). A client
 * that asks a CAPTCHA gives an unknown user none free: a person passes it, a script does not.
 */
export const resendThrottleRule = sendRule<ResendThrottle>({
  rule: 'resend-throttle',
  prepare: (s, _j, d) => (s.kind === 'resend' ? (d.conversion?.resendThrottleOn?.(s.clientId, s.now) ?? null) : null),
  decide: (s, j, read, throttle, d) => (read.kind !== 'resend' || throttle === null || j.challenge === 'passed' ? null : unknownUser(s, j, read, d)),
});

async function unknownUser(s: Send, j: Judgement, read: ResendRead, d: RuleDeps): Promise<Objection | null> {
  const { current } = read;
  const free = j.challenge === null ? (d.policy.unknownUserResends ?? 0) : 0;
  const pastFree = current.sendRequests - 1 >= free;
  if (!pastFree && d.addressCountry === undefined) return null;
  if (d.lists?.().allows(current.phoneNumber, s.clientId) ?? false) return null;
  const user = await read.user();
  if (user.known || (!pastFree && whereFrom(d, user.address, current.regionCode) !== 'elsewhere')) return null;
  const retryAfterSeconds = Math.max(1, Math.ceil((current.expiresAt.getTime() - s.now.getTime()) / 1000));
  return { rule: 'resend-throttle', passable: true, refusal: { kind: 'rate-limited', reason: 'unknown-user', retryAfterSeconds } };
}
