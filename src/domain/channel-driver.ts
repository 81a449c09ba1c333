import type { PhoneNumber } from './phone.js';
import type { Random } from './ports.js';
import type { RequestType, VerificationType } from './verification.js';

/** A channel a code goes out on. */
/** `silent`: no code goes out; the device proves its number itself (contract 19, SILENT). */
export type Channel = 'sms' | 'call' | 'whatsapp' | 'voice' | 'telegram' | 'silent';

export const channels: readonly Channel[] = ['sms', 'call', 'whatsapp', 'voice', 'telegram', 'silent'];

/** The channels a code goes out on through providers: those routes and prices name (silent sends nothing). */
export const sendingChannels: readonly Channel[] = channels.filter((c) => c !== 'silent');

/** One value per channel, made by `f`: a new channel is a compile error here until it has its line. */
export function perChannel<T>(f: (channel: Channel) => T): Record<Channel, T> {
  return { sms: f('sms'), call: f('call'), whatsapp: f('whatsapp'), voice: f('voice'), telegram: f('telegram'), silent: f('silent') };
}

/** How the record names a channel (contract 3.4 and 13 `delivery.channel`). */
export type DeliveryChannel = 'SMS' | 'CALL' | 'WHATSAPP' | 'VOICE' | 'TELEGRAM' | 'SILENT';

const deliveryChannels: Readonly<Record<Channel, DeliveryChannel>> = {
  sms: 'SMS',
  call: 'CALL',
  whatsapp: 'WHATSAPP',
  voice: 'VOICE',
  telegram: 'TELEGRAM',
  silent: 'SILENT',
};

/** How the record names a channel (contract 3.4 `delivery.channel`). */
export function deliveryChannelOf(channel: Channel): DeliveryChannel {
  return deliveryChannels[channel];
}

/** The channel a record's `delivery.channel` names. */
export function channelOfDelivery(delivery: DeliveryChannel): Channel {
  return channels.find((c) => deliveryChannels[c] === delivery) ?? 'sms';
}

/** A stored `delivery.channel`; null for a word no channel has. */
export function parseDeliveryChannel(raw: string | null): DeliveryChannel | null {
  return channels.map(deliveryChannelOf).find((d) => d === raw) ?? null;
}

/** A channel by its stored name; null for a name no driver knows (a stored job with it is an error, never SMS). */
export function parseChannel(raw: string): Channel | null {
  return channels.find((c) => c === raw) ?? null;
}

/**
 * What one verification type needs of its channel (port; the drivers live in src/channels/): the type a create
 * asks for, the channel that carries it, and how its code and the number the user is contacted from are made.
 */
export interface ChannelDriver {
  /** The `type` of a create request (seed 4.2). */
  readonly requestType: RequestType;
  /** The `type` of the record (contract 3.4). */
  readonly type: VerificationType;
  readonly channel: Channel;
  /**
   * False: the type may not be a later step of a workflow (create `fallback`, contract 13), as a dropped call may
   * not (its code is the caller id); absent: it may.
   */
  readonly fallbackStep?: boolean;
  /**
   * A fresh code, or `fixedCode` (a test number's, contract 9), and the number it is sent from: for a dropped call
   * the caller id ends with the code, the fixed one included.
   */
  newCode(random: Random, fixedCode: string | null): { readonly otp: string; readonly from: PhoneNumber };
}
