import { decidePrefix, prefixOf } from '../prefix-velocity.js';
import { sendRule } from './send-rule.js';
import { judgesTheUser, secondsBefore } from './rule-deps.js';

/**
 * PREFIX_LIMIT_COUNT (contract 10): creates towards one prefix across clients, read with the create's history;
 * past the limit the prefix is blocked, the block written with the refusal (a block in shadow is not written).
 */
export const prefixRule = sendRule<string>({
  rule: 'prefix',
  prepare: (s, _j, d) => (s.kind === 'create' && d.policy.prefix.count > 0 && judgesTheUser(s) ? prefixOf(s.phone.e164) : null),
  asks: (s, _j, prefix, d) => (prefix === null ? null : { prefix: { prefix, since: secondsBefore(s.now, d.policy.prefix.windowSeconds), now: s.now } }),
  decide(s, _j, read, prefix, d) {
    if (read.kind !== 'create' || prefix === null || read.history.prefix === null) return null;
    const decision = decidePrefix(read.history.prefix, s.now, d.policy.prefix);
    if (decision.kind !== 'blocked') return null;
    return {
      rule: 'prefix',
      refusal: {
        kind: 'not-allowed',
        rule: 'prefix',
        detail: `the prefix ${prefix} (numbers ${prefix}000 to ${prefix}999) is blocked until ${decision.until.toISOString()}: too many verifications towards it (PREFIX_LIMIT_COUNT)`,
      },
      ...(decision.newBlock && { effect: (tx) => tx.blockPrefix(prefix, s.now, decision.until) }),
    };
  },
});
