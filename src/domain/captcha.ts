/**
 * CAPTCHA per client (contract 14): a client that sets one needs `captchaToken` on every create, checked with
 * its provider server-side before anything is written or counted; each token is taken once.
 */

export const captchaProviders = ['turnstile', 'hcaptcha', 'recaptcha'] as const;
export type CaptchaProvider = (typeof captchaProviders)[number];

/** A client's CAPTCHA setting: the provider, the secret its verify address takes, the least score it accepts. */
export interface CaptchaSetting {
  readonly provider: CaptchaProvider;
  /** Never logged, never shown in full (`clients show` shows its first characters). */
  readonly secret: string;
  /** Applies where the provider's answer has a score (reCAPTCHA v3, hCaptcha Enterprise). */
  readonly minScore: number;
  /**
   * `always` (contract 14): every create needs a token. `throttled` (issue 20): only a create a throttle or the
   * new-country limit would refuse needs one, answered 403 CAPTCHA_REQUIRED without it, so that a real user
   * under a throttle gets a challenge instead of a refusal.
   */
  readonly when: CaptchaWhen;
}

export const captchaWhens = ['always', 'throttled'] as const;
export type CaptchaWhen = (typeof captchaWhens)[number];

export const defaultMinScore = 0.5;

/** What a provider's verify address answered. */
export type CaptchaAnswer =
  | { readonly kind: 'answered'; readonly success: boolean; readonly score: number | null }
  /** A reset connection, a 5xx, a body that is not JSON, or no answer within 5 s. */
  | { readonly kind: 'unavailable' };

/** Asks a provider about a token (port; src/captcha/siteverify.ts). */
export interface CaptchaVerifier {
  verify(provider: CaptchaProvider, secret: string, token: string, remoteIp: string | null): Promise<CaptchaAnswer>;
}

/** Remembers the tokens accepted, across instances (port; the database). */
export interface CaptchaTokenStore {
  /** Records a token accepted at `now`; false when it was accepted already since `since` (a repeat). */
  claim(token: string, now: Date, since: Date): Promise<boolean>;
}

/** How long the service itself remembers a token it accepted. */
export const captchaTokenSeconds = 600;

export type CaptchaDecision = 'passed' | 'required' | 'failed' | 'unavailable';

/** A provider's answer, as the create takes it: success, and a score (where there is one) at least the minimum. */
export function judgeCaptcha(answer: CaptchaAnswer, minScore: number): 'passed' | 'failed' | 'unavailable' {
  if (answer.kind === 'unavailable') return 'unavailable';
  if (!answer.success) return 'failed';
  return answer.score === null || answer.score >= minScore ? 'passed' : 'failed';
}

/** A secret as an operator may see it again: its first 4 characters and its length, never the whole. */
export function maskedSecret(secret: string): string {
  return `${secret.slice(0, Math.min(4, Math.floor(secret.length / 4)))}… (${secret.length} characters)`;
}
