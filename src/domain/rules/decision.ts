import { decisionOf } from '../decision.js';
import { riskOfSent } from '../risk.js';
import { sendRule } from './send-rule.js';

/**
 * The client's own say (contract 18): its decision webhook asked of the record about to be sent, before anything
 * is taken, counted or written (a deny leaves nothing behind). A resend that could not go anyway (ended, a
 * relayed code's) asks nothing; a test number's code never does.
 */
export const decisionRule = sendRule({
  rule: 'decision',
  async consult(s, j, d, v) {
    const setting = s.settings?.decision ?? null;
    if (!setting || !d.decisions || v.testNumber) return null;
    if (s.kind === 'resend' && (v.status !== 'PENDING' || v.expiresAt <= d.clock.now() || v.relayed)) return null;
    const signals = s.signals;
    const answer = await d.decisions.ask(s.clientId, setting, {
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
  },
});
