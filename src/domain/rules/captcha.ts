import { captchaTokenSeconds, judgeCaptcha, type CaptchaSetting } from '../captcha.js';
import { sendRule, type Judgement, type RuleRefusal, type Send } from './send-rule.js';
import { secondsBefore, type RuleDeps } from './rule-deps.js';

/**
 * A token checked with the client's provider, then taken for good (across instances): a token the provider
 * accepted but this service already took is a repeat. A provider that does not answer lets the send through
 * only with CAPTCHA_FAIL_OPEN.
 */
export async function checkCaptcha(
  d: Pick<RuleDeps, 'captcha' | 'clock'>,
  setting: CaptchaSetting,
  token: string | null,
  remoteIp: string | null,
): Promise<'passed' | 'required' | 'failed' | 'unavailable'> {
  if (token === null) return 'required';
  if (!d.captcha) return 'unavailable';
  const judged = judgeCaptcha(await d.captcha.verifier.verify(setting.provider, setting.secret, token, remoteIp), setting.minScore);
  if (judged === 'failed' || (judged === 'unavailable' && !d.captcha.failOpen)) return judged;
  const now = d.clock.now();
  return (await d.captcha.tokens.claim(token, now, secondsBefore(now, captchaTokenSeconds))) ? 'passed' : 'failed';
}

/** A CAPTCHA not passed. */
export function captchaRefusal(outcome: 'required' | 'failed' | 'unavailable'): RuleRefusal {
  return { kind: 'captcha', outcome };
}

/**
 * The client's CAPTCHA (contract 14), before anything else is read, written or counted: a create without a human
 * refuses nothing else. A relayed code comes from an auth server, not from a page: it has no widget, and that
 * server guards its own. `throttled`: a token that comes is checked as always; without one, a throttle's refusal
 * asks for one (the `challenge`). A resend is asked only by a `throttled` CAPTCHA (an `always` one was passed on
 * the create), with no address to give the provider.
 */
export const captchaRule = sendRule({
  rule: 'captcha',
  screen(s, j, d) {
    const setting = s.settings?.captcha;
    if (!setting || s.relayed || (s.kind === 'resend' && setting.when !== 'throttled')) return null;
    return screenCaptcha(s, j, d, setting);
  },
});

async function screenCaptcha(s: Send, j: Judgement, d: RuleDeps, setting: CaptchaSetting): Promise<RuleRefusal | null> {
  const token = s.captchaToken;
  if (setting.when === 'always' || token !== null) {
    const captcha = await checkCaptcha(d, setting, token, s.signals?.ip?.address ?? null);
    j.captchaPassed = captcha === 'passed';
    // A token refused in shadow mode leaves the send as if the client had no CAPTCHA.
    if (captcha !== 'passed' && (captcha === 'unavailable' || j.refuses('captcha'))) return captchaRefusal(captcha);
  }
  if (setting.when === 'throttled') j.challenge = token === null ? 'ask' : j.captchaPassed ? 'passed' : null;
  return null;
}
