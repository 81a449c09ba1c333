import { decidePhoneLimit, phoneLookBackSeconds } from '../limits.js';
import { sendRule } from './send-rule.js';
import { judgesTheUser, secondsBefore } from './rule-deps.js';

/**
 * OTP_PHONE_LIMIT (contract 6): a create's number, per client, read with its history. A relayed code is sent when
 * its auth server says: the number's own limits are that server's to keep. A resend's own limits (the cool-down,
 * OTP_MAX_SENDS) are the verification's, decided as its transaction locks it, and always enforce.
 */
export const phoneRule = sendRule<true>({
  rule: 'phone',
  prepare: (s) => (s.kind === 'create' && judgesTheUser(s) && !s.relayed ? true : null),
  asks: (s, _j, p, d) =>
    p === null ? null : { lookBackFrom: secondsBefore(s.now, phoneLookBackSeconds(d.policy.phoneLimit)), windowFrom: secondsBefore(s.now, d.policy.phoneLimit.windowSeconds) },
  decide(s, _j, read, p, d) {
    if (read.kind !== 'create' || p === null) return null;
    const limit = decidePhoneLimit(read.history.phone, s.now, d.policy.phoneLimit);
    return limit.allowed ? null : { rule: 'phone', refusal: { kind: 'rate-limited', reason: 'phone', retryAfterSeconds: limit.retryAfterSeconds } };
  },
});
