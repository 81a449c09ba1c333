import type { ChannelDriver } from '../domain/channel-driver.js';
import { lifetimeMinutes, type ClientSettings } from '../domain/client-settings.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';
import { numericCode, type Verification } from '../domain/verification.js';
import type { OutgoingWhatsApp } from './provider-port.js';
import type { SendingDriver } from './registry.js';

/**
 * WHATSAPP: a random numeric code sent in the business's authentication template (contract 13). The text is
 * Meta's, fixed for authentication templates: the provider sends only the code, so the client's SMS templates
 * do not apply; `text` is what the phone shows, for the development inbox.
 */
export class WhatsAppDriver implements ChannelDriver, SendingDriver {
  readonly requestType = 'WHATSAPP';
  readonly type = 'WHATSAPP';
  readonly channel = 'whatsapp';

  constructor(
    private readonly sender: PhoneNumber,
    private readonly codeLength: number,
  ) {}

  newCode(random: Random, fixedCode: string | null): { otp: string; from: PhoneNumber } {
    return { otp: fixedCode ?? numericCode((max) => random.int(max), this.codeLength), from: this.sender };
  }

  outgoing(v: Verification, from: string, sendId: string, settings: ClientSettings): OutgoingWhatsApp {
    const minutes = lifetimeMinutes((v.expiresAt.getTime() - v.createdAt.getTime()) / 1000);
    return {
      channel: 'whatsapp',
      sendId,
      verificationId: v.id,
      to: v.phoneNumber,
      from,
      code: v.otp,
      locale: v.locale ?? settings.defaultLocale,
      text: whatsappText(v.otp, minutes),
    };
  }
}

/** Meta's English authentication template body, with its security line and expiry footer. */
export function whatsappText(code: string, minutes: number): string {
  return `${code} is your verification code. For your security, do not share this code.\nThis code expires in ${minutes} minutes.`;
}
