import type { ChannelDriver } from '../domain/channel-driver.js';
import type { ClientSettings } from '../domain/client-settings.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';
import { voiceLanguage, voiceSentence } from '../domain/spoken-code.js';
import { numericCode, type Verification } from '../domain/verification.js';
import type { OutgoingVoice } from './provider-port.js';
import type { SendingDriver } from './registry.js';

/** VOICE_CALL: a random numeric code, read aloud digit by digit in a call from VOICE_CALLER_NUMBER (contract 13). */
export class VoiceDriver implements ChannelDriver, SendingDriver {
  readonly requestType = 'VOICE_CALL';
  readonly type = 'VOICE_CALL';
  readonly channel = 'voice';

  constructor(
    private readonly caller: PhoneNumber,
    private readonly codeLength: number,
    private readonly repeat: number,
  ) {}

  newCode(random: Random, fixedCode: string | null): { otp: string; from: PhoneNumber } {
    return { otp: fixedCode ?? numericCode((max) => random.int(max), this.codeLength), from: this.caller };
  }

  outgoing(v: Verification, from: string, sendId: string, settings: ClientSettings): OutgoingVoice {
    const language = voiceLanguage(v.locale ?? settings.defaultLocale);
    return {
      channel: 'voice',
      sendId,
      verificationId: v.id,
      to: v.phoneNumber,
      from,
      code: v.otp,
      language,
      sentence: voiceSentence(language, v.otp),
      repeat: this.repeat,
    };
  }
}

/** The whole of what the call says, for the development inbox: the sentence VOICE_REPEAT times. */
export function spokenText(voice: OutgoingVoice): string {
  return Array.from({ length: voice.repeat }, () => voice.sentence).join(' ');
}
