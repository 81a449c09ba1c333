import type { ChannelDriver } from '../domain/channel-driver.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';
import { renderSms, type ClientSettings } from '../domain/client-settings.js';
import { numericCode, type Verification } from '../domain/verification.js';
import type { OutgoingSms } from './provider-port.js';
import type { SendingDriver } from './registry.js';

/** SEND_SMS: a random numeric code, sent by SMS from the configured sender number. */
export class SmsDriver implements ChannelDriver, SendingDriver {
  readonly requestType = 'SEND_SMS';
  readonly type = 'SMS';
  readonly channel = 'sms';

  constructor(
    private readonly sender: PhoneNumber,
    private readonly codeLength: number,
  ) {}

  newCode(random: Random, fixedCode: string | null): { otp: string; from: PhoneNumber } {
    return { otp: fixedCode ?? numericCode((max) => random.int(max), this.codeLength), from: this.sender };
  }

  outgoing(v: Verification, from: string, sendId: string, settings: ClientSettings): OutgoingSms {
    return {
      channel: 'sms',
      sendId,
      verificationId: v.id,
      to: v.phoneNumber,
      from,
      text: smsText(v, settings),
      code: v.otp,
      ...((v.relayed === true || Boolean(v.messageText)) && { codeIsGiven: true }),
    };
  }
}

/**
 * The SMS a user reads: the client's template for the verification's locale, or the English default, with the
 * real lifetime, the app's name and the Android and WebOTP lines the client asked for (contract 9).
 */
export function smsText(v: Verification, settings: ClientSettings): string {
  // A caller that wrote its own text (CAMARA's send-code, contract 15) gets it, with the code where it said.
  if (v.messageText) return v.messageText.replaceAll('{{code}}', v.otp);
  return renderSms(settings, v.locale, { code: v.otp, seconds: (v.expiresAt.getTime() - v.createdAt.getTime()) / 1000 });
}
