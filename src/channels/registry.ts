import type { Channel, ChannelDriver } from '../domain/channel-driver.js';
import type { ClientSettings } from '../domain/client-settings.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { RequestType, Verification, VerificationType } from '../domain/verification.js';
import type { CallerIdRange } from '../providers/caller-id.js';
import { DroppedCallDriver } from './dropped-call.js';
import type { Outgoing } from './provider-port.js';
import { SilentDriver } from './silent.js';
import { SmsDriver } from './sms.js';
import { TelegramDriver } from './telegram.js';
import { WhatsAppDriver } from './whatsapp.js';
import { VoiceDriver } from './voice.js';

/** What the send worker needs of a driver: the message or call its channel carries for a verification. */
export interface SendingDriver {
  readonly channel: Channel;
  /** The provider's input for sending `v`'s code from `from` (E.164), under our id `sendId`, as its client set it. */
  outgoing(v: Verification, from: string, sendId: string, settings: ClientSettings): Outgoing;
}

export interface ChannelSettings {
  readonly smsSender: PhoneNumber;
  readonly codeLength: number;
  readonly callerIdRanges: readonly CallerIdRange[];
  /** WHATSAPP_SENDER_NUMBER: the pairedNumber of a WhatsApp verification; smsSender when absent. */
  readonly whatsappSender?: PhoneNumber;
  /** VOICE_CALLER_NUMBER: the number voice calls come from; absent: the SMS sender (its default). */
  readonly voiceCaller?: PhoneNumber;
  /** VOICE_REPEAT: how many times a voice call reads the code; absent: 3 (its default). */
  readonly voiceRepeat?: number;
  /** SILENT_TIMEOUT_SECONDS: how long a silent step waits for the device's proof; absent: 30 (its default). */
  readonly silentTimeoutSeconds?: number;
}

/** One driver per verification type: a new channel is one driver and one line here. */
export class ChannelRegistry {
  private readonly drivers: readonly (ChannelDriver & SendingDriver)[];

  constructor(settings: ChannelSettings) {
    this.drivers = [
      new SmsDriver(settings.smsSender, settings.codeLength),
      new DroppedCallDriver(settings.callerIdRanges),
      new WhatsAppDriver(settings.whatsappSender ?? settings.smsSender, settings.codeLength),
      new VoiceDriver(settings.voiceCaller ?? settings.smsSender, settings.codeLength, settings.voiceRepeat ?? 3),
      new TelegramDriver(settings.smsSender, settings.codeLength),
      new SilentDriver(settings.smsSender, settings.codeLength, settings.silentTimeoutSeconds ?? 30),
    ];
  }

  /** The driver of a create request's type. */
  forRequest(type: RequestType): ChannelDriver {
    return this.find((d) => d.requestType === type, `request type ${type}`);
  }

  /**
   * The request type a name stands for, when a driver takes it: the drop-in surfaces (contract 15) map their
   * own channel words to request types, and a type no driver takes here is not offered.
   */
  requestTypeNamed(name: string): RequestType | null {
    return this.drivers.find((d) => d.requestType === name)?.requestType ?? null;
  }

  /** The driver of a record's type (its first channel: a dropped call that fell back to SMS is still DROPPED_CALL). */
  forType(type: VerificationType): ChannelDriver & SendingDriver {
    return this.find((d) => d.type === type, `type ${type}`);
  }

  /** The request types a workflow's later steps may take (create `fallback`, contract 13), in the registry's order. */
  fallbackTypes(): readonly RequestType[] {
    return this.drivers.filter((d) => d.fallbackStep !== false).map((d) => d.requestType);
  }

  /** The driver a stored send job's channel names; an unknown channel is an error, never another channel. */
  forChannel(channel: Channel): SendingDriver {
    return this.find((d) => d.channel === channel, `channel ${channel}`);
  }

  private find(match: (d: ChannelDriver & SendingDriver) => boolean, what: string): ChannelDriver & SendingDriver {
    const driver = this.drivers.find(match);
    if (!driver) throw new Error(`no channel driver for ${what}`);
    return driver;
  }
}
