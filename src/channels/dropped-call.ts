import type { ChannelDriver } from '../domain/channel-driver.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';
import type { Verification } from '../domain/verification.js';
import { callerIdEndingIn, pickCallerId, type CallerIdRange } from '../providers/caller-id.js';
import type { OutgoingCall } from './provider-port.js';
import type { SendingDriver } from './registry.js';

/** Digits of a dropped call's code: the end of the caller id (contract 3.4). */
export const droppedCallCodeLength = 4;

/** DROPPED_CALL: a call from a random caller id of the configured ranges, whose last digits are the code. */
export class DroppedCallDriver implements ChannelDriver, SendingDriver {
  readonly requestType = 'DROPPED_CALL';
  readonly type = 'DROPPED_CALL';
  readonly channel = 'call';
  /** A later step carries the code already made; a caller id ending in it would be another call's code. */
  readonly fallbackStep = false;

  constructor(private readonly ranges: readonly CallerIdRange[]) {}

  newCode(random: Random, fixedCode: string | null): { otp: string; from: PhoneNumber } {
    if (fixedCode !== null) return { otp: fixedCode, from: callerIdEndingIn(this.ranges, fixedCode, random) };
    const from = pickCallerId(this.ranges, random);
    return { otp: from.e164.slice(-droppedCallCodeLength), from };
  }

  outgoing(v: Verification, from: string, sendId: string): OutgoingCall {
    return { channel: 'call', sendId, verificationId: v.id, to: v.phoneNumber, callerId: from };
  }
}
