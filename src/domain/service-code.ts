import type { Verification } from './verification.js';

/**
 * Verify services as providers (contract 19): `twilio-verify` and `vonage-verify` make, send and check their own
 * code. While the latest send of a verification went through one of them, the code the user holds is that
 * service's, unknown here: the record shows none, and a verify asks the service. The names are the providers'
 * (src/providers/registry.ts); a test keeps this list and the providers that check codes the same.
 */
export const verifyServiceProviders: ReadonlySet<string> = new Set(['twilio-verify', 'vonage-verify']);

/** A send a verify service made, as its check needs it. */
export interface ServiceSend {
  /** The provider's name (`twilio-verify`). */
  readonly provider: string;
  /** E.164: the number the service sent its code to. */
  readonly to: string;
  /** The service's id of the send (a Twilio Verification sid, a Vonage request_id); null while a resend is on its way. */
  readonly messageId: string | null;
}

/** What a verify service said of a code. */
export type ServiceCheck =
  | { readonly kind: 'right' }
  /** Wrong, or the service's verification is gone (expired, used up, not found): this code proves nothing. */
  | { readonly kind: 'wrong'; readonly detail: string }
  /** No answer within PROVIDER_TIMEOUT_MS, throttled, a server error, refused credentials: nothing is decided. */
  | { readonly kind: 'unavailable'; readonly reason: string };

/** Asks the verify service that made a send whether a code is its code (port; the providers' `checkCode`). */
export interface ServiceCodeChecks {
  /** Resolves within PROVIDER_TIMEOUT_MS; never rejects (a failure is `unavailable`). */
  check(send: ServiceSend, code: string): Promise<ServiceCheck>;
}

/** What a provider took: it sent a code (whatever its receipt said after). */
const taken: ReadonlySet<string> = new Set(['SENT', 'DELIVERED', 'UNDELIVERED']);

/**
 * The verify service whose code the user holds now, or null when it is ours (or none was sent yet): the
 * provider of the latest send a provider took. While a resend or a failover waits for its provider, that is the
 * one before it, its id no longer on the record (null).
 */
export function serviceSendOf(v: Pick<Verification, 'delivery' | 'deliveries' | 'phoneNumber'>): ServiceSend | null {
  const { provider, messageId, status } = v.delivery;
  if (provider !== null && taken.has(status)) return verifyServiceProviders.has(provider) ? { provider, to: v.phoneNumber, messageId } : null;
  for (let i = v.deliveries.length - 1; i >= 0; i--) {
    const attempt = v.deliveries[i];
    if (!attempt || !taken.has(attempt.status)) continue;
    return verifyServiceProviders.has(attempt.provider) ? { provider: attempt.provider, to: v.phoneNumber, messageId: null } : null;
  }
  return null;
}

/** Whether the code out there is a verify service's: the record then shows none (it is not ours to show). */
export function codeIsService(v: Pick<Verification, 'delivery' | 'deliveries' | 'phoneNumber'>): boolean {
  return serviceSendOf(v) !== null;
}

