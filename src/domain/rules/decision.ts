import { decisionOf, type CustomerDecisions, type DecisionSetting } from '../decision.js';
import type { Verification } from '../verification.js';
import type { RuleDeps } from './rule-deps.js';
import { riskOfSent } from '../risk.js';
import { sendRule, type Judgement, type RuleRefusal, type Send } from './send-rule.js';

/**
 * The client's own say (contract 18): its decision webhook asked of the record about to be sent, before anything
 * is taken, counted or written (a deny leaves nothing behind). A resend that could not go anyway (ended, a
 * relayed code's) asks nothing; a test number's code never does.
 */
export const decisionRule = sendRule({
  rule: 'decision',
  consult(s, j, d, v) {
    const setting = s.settings?.decision ?? null;
    if (!setting || !d.decisions || v.testNumber) return null;
    if (s.kind === 'resend' && (v.status !== 'PENDING' || v.expiresAt <= d.clock.now() || v.relayed)) return null;
    return ask(s, j, d, v, setting, d.decisions);
  },
});

async function ask(s: Send, j: Judgement, d: RuleDeps, v: Verification, setting: DecisionSetting, decisions: CustomerDecisions): Promise<RuleRefusal | null> {
  const signals = s.signals;
  const answer = await decisions.ask(s.clientId, setting, {
    id: v.id,
    phoneNumber: v.phoneNumber,
    countryCode: v.countryCode,
    channel: v.delivery.channel,
    reference: v.reference,
    signals: { ip: signals?.ip?.address ?? null, deviceId: signals?.deviceId ?? null, platform: signals?.platform ?? null },
    risk: riskOfSent(j.heard, j.captchaPassed),
  });
  d.observer?.decisionAnswered?.(answer);
  if (decisionOf(answer, setting) !== 'deny' || !j.refuses('decision')) return null;
  const detail = answer === 'deny' ? "the client's decision webhook denied this send" : `the client's decision webhook gave no answer (${answer}) and its default is deny`;
  return { kind: 'not-allowed', rule: 'decision', detail };
}
