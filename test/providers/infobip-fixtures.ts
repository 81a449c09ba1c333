import type { OutgoingSms, Provider, ProviderContext } from '../../src/channels/provider-port.js';
import { infobipSms } from '../../src/providers/infobip-sms.js';
import { recordingContext, sampleSms } from './support.js';

/** The settings and answers the Infobip tests share (infobip-sms.test.ts sends, infobip-receipts.test.ts reports). */

export const apiKey = '003026bbc133714df1834b8638bb496e-8f4b3d9a-e931-478d-a994-28a725159ab9';
export const secret = 'k3Jv9QxW2mZ8pL5tR7yB4nC6dF1gH0sA-_e';
export const callbackUrl = 'https://otp.example.org/callbacks/infobip';

export const sms: OutgoingSms = { ...sampleSms, sendId: 'send-7c1f0e2a', from: 'OTPService' };

/** Parses raw settings as the start does, then creates the provider. */
export function createInfobip(raw: Record<string, string>, context: ProviderContext = recordingContext(callbackUrl)): Provider {
  const { settings } = infobipSms;
  return infobipSms.create(
    {
      INFOBIP_BASE_URL: settings.INFOBIP_BASE_URL.parse(raw.INFOBIP_BASE_URL ?? 'https://xxxxx.api.infobip.com'),
      INFOBIP_API_KEY: settings.INFOBIP_API_KEY.parse(raw.INFOBIP_API_KEY ?? apiKey),
      INFOBIP_CALLBACK_SECRET: settings.INFOBIP_CALLBACK_SECRET.parse(raw.INFOBIP_CALLBACK_SECRET ?? secret),
    },
    context,
  );
}

/** The answer Infobip documents for one destination (SmsResponseEnvelope). */
export const pendingAnswer = (messageId: string) => ({
  bulkId: '2034072219640523072',
  messages: [
    {
      messageId,
      status: { groupId: 1, groupName: 'PENDING', id: 26, name: 'PENDING_ACCEPTED', description: 'Message sent to next instance' },
      destination: '2348012345678',
      details: { messageCount: 1 },
    },
  ],
});
