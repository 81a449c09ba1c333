import type { CarrierCheck } from '../domain/carrier-checks.js';
import type { CamaraApi } from './camara-api.js';

/**
 * CAMARA Call Forwarding Signal 0.4 (test/peers/camara/call-forwarding-signal.yaml): whether the number's
 * unconditional call forwarding is active. Conditional forwards (busy, unreachable, no answer) are not asked: the
 * phone that answers a call still rings first.
 */
export class CamaraCallForwarding implements CarrierCheck {
  /** The scope the description's `/unconditional-call-forwardings` asks of a token (its openId security). */
  static readonly scope = 'call-forwarding-signal:unconditional-call-forwardings:read';

  constructor(private readonly api: CamaraApi) {}

  async flagged(e164: string, signal: AbortSignal): Promise<boolean> {
    const answer = await this.api.post('/call-forwarding-signal/v0.4/unconditional-call-forwardings', { phoneNumber: e164 }, signal);
    if (typeof answer.active !== 'boolean') throw new Error('CAMARA Call Forwarding Signal answered without active');
    return answer.active;
  }
}
