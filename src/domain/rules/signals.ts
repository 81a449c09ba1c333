import { hasRoom, signalHistorySeconds, signalKeys, type SignalKey, type SignalKind } from '../signals.js';
import type { RiskRule } from '../risk.js';
import { sendRule, type AnySendRule } from './send-rule.js';
import { judgesTheUser, secondsBefore } from './rule-deps.js';

/**
 * A signal limit (contract 14): a create's end user's address, network or device, per client per
 * SIGNAL_WINDOW_SECONDS, read with the create's history; past its room the create waits until the signal's oldest
 * create leaves the window.
 */
function signalRule(rule: RiskRule & SignalKind): AnySendRule {
  return sendRule<SignalKey>({
    rule,
    prepare: (s, _j, d) => (s.kind === 'create' && judgesTheUser(s) ? (signalKeys(s.signals, d.policy.signals).find((k) => k.kind === rule) ?? null) : null),
    asks: (s, _j, key, d) =>
      key === null
        ? null
        : { signals: { keys: [key], since: secondsBefore(s.now, d.policy.signals.windowSeconds), historySince: secondsBefore(s.now, signalHistorySeconds) } },
    decide(s, _j, read, key, d) {
      if (read.kind !== 'create' || key === null) return null;
      const state = read.history.signals[read.query.signals.keys.indexOf(key)] ?? { recentCreates: 0, oldest: null, verified: 0 };
      if (hasRoom(key.limit, state)) return null;
      const frees = (state.oldest?.getTime() ?? s.now.getTime()) + d.policy.signals.windowSeconds * 1000;
      return { rule, refusal: { kind: 'rate-limited', reason: rule, retryAfterSeconds: Math.max(1, Math.ceil((frees - s.now.getTime()) / 1000)) } };
    },
  });
}

/** IP_LIMIT_COUNT: creates per end user's address. */
export const ipRule = signalRule('ip');

/** IP_PREFIX_LIMIT_COUNT: creates per end user's network (the /24 or /48 of the address). */
export const networkRule = signalRule('network');

/** DEVICE_LIMIT_COUNT: creates per end user's device. */
export const deviceRule = signalRule('device');
