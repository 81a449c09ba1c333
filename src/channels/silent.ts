import type { ChannelDriver } from '../domain/channel-driver.js';
import type { ClientSettings } from '../domain/client-settings.js';
import type { PhoneNumber } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';
import { numericCode, type Verification } from '../domain/verification.js';
import type { OutgoingSilent } from './provider-port.js';
import type { SendingDriver } from './registry.js';

/**
 * SILENT (contract 19): no code goes to the phone; the device proves its number itself, through the mobile
 * network (CAMARA Number Verification) or a Firebase PNV token, within SILENT_TIMEOUT_SECONDS of the create. It
 * may be a workflow's first step only: its code, made as an SMS code is and never shown, is what a later step
 * sends when the silent step fails.
 */
export class SilentDriver implements ChannelDriver, SendingDriver {
  readonly requestType = 'SILENT';
  readonly type = 'SILENT';
  readonly channel = 'silent';
  readonly fallbackStep = false;

  constructor(
    private readonly sender: PhoneNumber,
    private readonly codeLength: number,
    private readonly timeoutSeconds: number,
  ) {}

  newCode(random: Random, fixedCode: string | null): { otp: string; from: PhoneNumber } {
    return { otp: fixedCode ?? numericCode((max) => random.int(max), this.codeLength), from: this.sender };
  }

  outgoing(v: Verification, _from: string, sendId: string, _settings: ClientSettings): OutgoingSilent {
    return { channel: 'silent', sendId, verificationId: v.id, to: v.phoneNumber, deadline: silentDeadline(v, this.timeoutSeconds) };
  }
}

/** When a silent step fails without the device's proof: SILENT_TIMEOUT_SECONDS after the create. */
export function silentDeadline(v: Pick<Verification, 'createdAt'>, timeoutSeconds: number): Date {
  return new Date(v.createdAt.getTime() + timeoutSeconds * 1000);
}
