import type { ChannelDriver } from '../domain/channel-driver.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';
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

  newCode(random: Random): { otp: string; from: PhoneNumber } {
    return { otp: numericCode((max) => random.int(max), this.codeLength), from: this.sender };
  }

  outgoing(v: Verification, from: string, sendId: string): OutgoingSms {
    return { channel: 'sms', sendId, verificationId: v.id, to: v.phoneNumber, from, text: smsText(v), code: v.otp };
  }
}

/** The SMS a user reads. The code comes first so that phones can offer to fill it in. */
export function smsText(v: Verification): string {
  return `${v.otp} is your verification code. It expires in ${lifetime(v)}. Do not share it.`;
}

/**
 * The code's lifetime (OTP_TTL_SECONDS) as the user reads it: in seconds under a minute, else in whole minutes,
 * rounded down so that the code never dies before the time the text promises.
 */
function lifetime(v: Verification): string {
  const seconds = Math.max(1, Math.floor((v.expiresAt.getTime() - v.createdAt.getTime()) / 1000));
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
