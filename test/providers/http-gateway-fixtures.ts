import { randomBytes } from 'node:crypto';
import type { Provider, ProviderContext } from '../../src/channels/provider-port.js';
import { httpGateway } from '../../src/providers/http-gateway.js';
import { recordingContext } from './support.js';

/** The secret and set-up the gateway tests share (http-gateway.test.ts sends, http-gateway-receipts.test.ts receipts). */

/** A fresh secret for each test process, as an operator would make one. */
export const secret = `whsec_${randomBytes(32).toString('base64')}`;
export const callbackUrl = 'https://otp.example.org/callbacks/http';

/** Parses raw settings as the start does, then creates the provider. */
export function createGateway(url: string, context: ProviderContext = recordingContext(callbackUrl), key = secret): Provider {
  const { settings } = httpGateway;
  return httpGateway.create(
    { HTTP_GATEWAY_URL: settings.HTTP_GATEWAY_URL.parse(url), HTTP_GATEWAY_SECRET: settings.HTTP_GATEWAY_SECRET.parse(key) },
    context,
  );
}
