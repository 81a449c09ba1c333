import type { VerificationServiceDeps } from '../verification-service.js';
import type { ReadAsk, Send } from './send-rule.js';

/** What the rules are given of the service's parts: the same ports the service has, no more. */
export type RuleDeps = Pick<
  VerificationServiceDeps,
  | 'policy'
  | 'clock'
  | 'observer'
  | 'conversion'
  | 'dailySends'
  | 'spend'
  | 'sendPrice'
  | 'newCountrySends'
  | 'abroadSends'
  | 'captcha'
  | 'decisions'
  | 'carrierChecks'
  | 'lists'
  | 'addressCountry'
  | 'firstProvider'
>;

/**
 * Whether an end user's address is in their number's country (`local`), known to be in another (`elsewhere`), or
 * neither can be told (no address, no country for it, or IP_COUNTRY_DATABASE off).
 */
export function whereFrom(d: Pick<RuleDeps, 'addressCountry'>, address: string | null, regionCode: string | null): 'local' | 'elsewhere' | 'unknown' {
  const country = address === null || regionCode === null ? null : (d.addressCountry?.(address) ?? null);
  return country === null ? 'unknown' : country === regionCode ? 'local' : 'elsewhere';
}

/** `seconds` before `now`. */
export function secondsBefore(now: Date, seconds: number): Date {
  return new Date(now.getTime() - seconds * 1000);
}

/** A create's or resend's rules judge its number's user: not a test number's, nor an allowed number's. */
export function judgesTheUser(s: { readonly testNumber: boolean; readonly allowed: boolean }): boolean {
  return !s.testNumber && !s.allowed;
}

/** A send's verified history is read back this far: a user who verified within it is a known user. */
export const verifiedHistoryDays = 30;

/**
 * What a create a throttle or a cap may refuse asks of its read: whether the client had a code of this number, or
 * from this address, network or device, verified lately (a known user's).
 */
export function knownUserAsk(s: Send): ReadAsk {
  const { signals } = s;
  return {
    verifiedSince: {
      ip: signals?.ip?.address ?? null,
      network: signals?.ip?.network ?? null,
      device: signals?.deviceId ?? null,
      since: secondsBefore(s.now, verifiedHistoryDays * 86_400),
    },
  };
}
