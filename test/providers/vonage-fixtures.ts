import { createHash, createHmac } from 'node:crypto';
import type { Provider, ProviderContext } from '../../src/channels/provider-port.js';
import { vonage } from '../../src/providers/vonage.js';
import type { VonageSignatureMethod } from '../../src/providers/vonage-signature.js';
import { recordingContext } from './support.js';

/** The settings and signing the Vonage tests share (vonage-sms.test.ts sends, vonage-receipts.test.ts receipts). */

export const apiKey = 'abcd1234';
export const apiSecret = 'test-api-secret-0123';
export const signatureSecret = 'test-signature-secret-0123456789';
export const callbackUrl = 'https://otp.example.org/callbacks/vonage';

/** Parses raw settings as the start does (the default where unset), then creates the provider. */
export function createVonage(raw: Record<string, string | undefined>, context: ProviderContext = recordingContext(callbackUrl)): Provider {
  const { settings } = vonage;
  const secret = 'VONAGE_API_SECRET' in raw ? raw.VONAGE_API_SECRET : apiSecret;
  return vonage.create(
    {
      VONAGE_API_KEY: settings.VONAGE_API_KEY.parse(raw.VONAGE_API_KEY ?? apiKey),
      VONAGE_API_SECRET: secret === undefined ? undefined : settings.VONAGE_API_SECRET.parse(secret),
      VONAGE_SIGNATURE_SECRET: settings.VONAGE_SIGNATURE_SECRET.parse(raw.VONAGE_SIGNATURE_SECRET ?? signatureSecret),
      VONAGE_SIGNATURE_METHOD: settings.VONAGE_SIGNATURE_METHOD.parse(raw.VONAGE_SIGNATURE_METHOD ?? settings.VONAGE_SIGNATURE_METHOD.default),
      VONAGE_BASE_URL: settings.VONAGE_BASE_URL.parse(raw.VONAGE_BASE_URL ?? settings.VONAGE_BASE_URL.default),
      VONAGE_CURRENCY: settings.VONAGE_CURRENCY.parse(raw.VONAGE_CURRENCY ?? settings.VONAGE_CURRENCY.default),
      VONAGE_APPLICATION_ID: undefined,
      VONAGE_PRIVATE_KEY: undefined,
      VONAGE_VOICE_BASE_URL: settings.VONAGE_VOICE_BASE_URL.parse(settings.VONAGE_VOICE_BASE_URL.default),
    },
    context,
  );
}

/**
 * Signs parameters as Vonage's documentation describes it, independently of the provider's code: sorted by name,
 * `&name=value` with & and = in values replaced by _, then MD5 of that and the secret, or an HMAC keyed by it.
 */
export function signLikeVonage(secret: string, method: VonageSignatureMethod, params: Record<string, string>): string {
  let data = '';
  for (const name of Object.keys(params).sort()) {
    if (name !== 'sig') data += `&${name}=${(params[name] ?? '').replace(/&/g, '_').replace(/=/g, '_')}`;
  }
  if (method === 'md5hash') return createHash('md5').update(data + secret).digest('hex');
  return createHmac(method, secret).update(data).digest('hex').toUpperCase();
}
