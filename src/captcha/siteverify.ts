import type { CaptchaAnswer, CaptchaProvider, CaptchaVerifier } from '../domain/captcha.js';

/** Each provider's verify address (TURNSTILE_VERIFY_URL, HCAPTCHA_VERIFY_URL, RECAPTCHA_VERIFY_URL). */
export type VerifyUrls = Readonly<Record<CaptchaProvider, string>>;

/** The contract's bound on a provider's answer: past it the provider counts as not answering. */
export const captchaTimeoutMs = 5_000;

/**
 * The three providers' siteverify, which take the same form POST (`secret`, `response`, and `remoteip` when the
 * end user's address is known) and answer JSON with `success` and, for reCAPTCHA v3 and hCaptcha Enterprise, a
 * `score`. A reset connection, a non-2xx answer, a body that is not JSON, or no answer within 5 s counts as not
 * answering.
 */
export class SiteVerify implements CaptchaVerifier {
  constructor(
    private readonly urls: VerifyUrls,
    private readonly timeoutMs = captchaTimeoutMs,
  ) {}

  async verify(provider: CaptchaProvider, secret: string, token: string, remoteIp: string | null): Promise<CaptchaAnswer> {
    const form = new URLSearchParams({ secret, response: token });
    if (remoteIp !== null) form.set('remoteip', remoteIp);
    try {
      const res = await fetch(this.urls[provider], {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) {
        await res.body?.cancel();
        return { kind: 'unavailable' };
      }
      const body: unknown = JSON.parse(await res.text());
      if (typeof body !== 'object' || body === null || typeof (body as { success?: unknown }).success !== 'boolean') return { kind: 'unavailable' };
      const { success, score } = body as { success: boolean; score?: unknown };
      return { kind: 'answered', success, score: typeof score === 'number' && Number.isFinite(score) ? score : null };
    } catch {
      // Reset, refused, timed out, or not JSON: what was wrong never names the secret or the token.
      return { kind: 'unavailable' };
    }
  }
}
