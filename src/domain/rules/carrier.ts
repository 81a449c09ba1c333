import { ringsTheNumber, stepPastForward, type CarrierOutcome } from '../carrier-checks.js';
import { checkCaptcha, captchaRefusal } from './captcha.js';
import { sendRule, type Judgement, type RuleRefusal, type Send } from './send-rule.js';
import { judgesTheUser, type RuleDeps } from './rule-deps.js';

/** Whether a send's code rings the number: a create's type that calls, a resend of a call's code. */
function rings(s: Send): boolean {
  if (s.kind !== 'resend') return s.type !== null && ringsTheNumber(s.type);
  const channel = s.current?.delivery.channel;
  return channel === 'CALL' || channel === 'VOICE';
}

/**
 * The sends the number's network is asked about: a create's or a pending resend's of a number judged at all, and a
 * step's (asked for the steps falling due together, before their transaction).
 */
function asked(s: Send): boolean {
  if (s.kind === 'step') return true;
  if (!judgesTheUser(s)) return false;
  return s.kind === 'create' || s.current?.status === 'PENDING';
}

/**
 * The carrier checks of a send (contract 18), asked together once per send, each only where its rule is on (a
 * forward only for a code that rings): null where not asked. A check that failed or timed out lets the send
 * through (its answer is neither flagged nor clear).
 */
function carrierAnswers(s: Send, j: Judgement, d: RuleDeps): Promise<readonly [CarrierOutcome | null, CarrierOutcome | null]> {
  return j.memo('carrier', async () => {
    const { simSwap, callForwarding } = d.carrierChecks ?? {};
    return Promise.all([
      simSwap && j.modeOf('sim-swap') !== 'off' ? simSwap.outcome(s.phone.e164) : null,
      callForwarding && j.modeOf('call-forwarding') !== 'off' && rings(s) ? callForwarding.outcome(s.phone.e164) : null,
    ] as const);
  });
}

/**
 * A recent SIM swap is a challenge: a client whose CAPTCHA enforces has the send pass it (a `throttled` one
 * without a token is asked for it), and one without hears the rule as in shadow. A resend's token that was not
 * checked yet (an `always` CAPTCHA is checked on the create only) is checked now.
 */
export const simSwapRule = sendRule({
  rule: 'sim-swap',
  screen: (s, j, d) => (s.kind === 'step' || !asked(s) || !d.carrierChecks?.simSwap ? null : screenSimSwap(s, j, d)),
});

async function screenSimSwap(s: Send, j: Judgement, d: RuleDeps): Promise<RuleRefusal | null> {
  const [swapped] = await carrierAnswers(s, j, d);
  if (swapped !== 'flagged') return null;
  const mode = j.modeOf('sim-swap');
  const captcha = s.settings?.captcha ?? null;
  const challengeable = captcha !== null && !s.relayed && j.modeOf('captcha') === 'enforce';
  if (!j.refuses('sim-swap', mode === 'enforce' && !challengeable ? 'shadow' : mode) || j.captchaPassed) return null;
  if (s.kind === 'create' || s.captchaToken === null || captcha === null) return captchaRefusal('required');
  const checked = await checkCaptcha(d, captcha, s.captchaToken, null);
  if (checked !== 'passed') return captchaRefusal(checked);
  j.captchaPassed = true;
  return null;
}

/**
 * A forwarded line takes a call's code elsewhere: a create's or a step's goes out through the workflow's first
 * step after it that does not ring instead (`steps`), and is refused when none is left, as is a resend of a call's
 * code (a resend cannot change channel).
 */
export const callForwardingRule = sendRule({
  rule: 'call-forwarding',
  screen: (s, j, d) => (!asked(s) || !rings(s) || !d.carrierChecks?.callForwarding ? null : screenForwarding(s, j, d)),
});

async function screenForwarding(s: Send, j: Judgement, d: RuleDeps): Promise<RuleRefusal | null> {
  const [, forwarded] = await carrierAnswers(s, j, d);
  if (forwarded !== 'flagged' || !j.refuses('call-forwarding')) return null;
  const steps = stepPastForward(s.kind === 'resend' ? [] : s.workflow);
  if (steps !== null) {
    j.steps = steps;
    return null;
  }
  const detail = "the number's calls are forwarded (unconditional call forwarding is active): the code would ring elsewhere";
  return { kind: 'not-allowed', rule: 'call-forwarding', detail };
}
