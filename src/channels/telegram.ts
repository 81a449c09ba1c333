import type { ChannelDriver } from '../domain/channel-driver.js';
import type { ClientSettings } from '../domain/client-settings.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';
import { numericCode, type Verification } from '../domain/verification.js';
import type { OutgoingTelegram } from './provider-port.js';
import type { SendingDriver } from './registry.js';

/**
 * TELEGRAM: a random numeric code of the service's own, delivered in Telegram by its Verification Codes account
 * (contract 19). Telegram writes the message around the code, so the client's SMS templates do not apply; `text`
 * is what the development inbox shows.
 */
export class TelegramDriver implements ChannelDriver, SendingDriver {
  readonly requestType = 'TELEGRAM';
  readonly type = 'TELEGRAM';
  readonly channel = 'telegram';

  constructor(
    private readonly sender: PhoneNumber,
    private readonly codeLength: number,
  ) {}

  newCode(random: Random, fixedCode: string | null): { otp: string; from: PhoneNumber } {
    return { otp: fixedCode ?? numericCode((max) => random.int(max), this.codeLength), from: this.sender };
  }

  outgoing(v: Verification, _from: string, sendId: string, _settings: ClientSettings): OutgoingTelegram {
    return {
      channel: 'telegram',
      sendId,
      verificationId: v.id,
      to: v.phoneNumber,
      code: v.otp,
      expiresAt: v.expiresAt,
      text: `${v.otp} is your verification code.`,
    };
  }
}
