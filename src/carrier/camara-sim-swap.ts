import type { CarrierCheck } from '../domain/carrier-checks.js';
import type { CamaraApi } from './camara-api.js';

/** CAMARA SIM Swap 2.x (test/peers/camara/sim-swap.yaml): whether the SIM changed within `maxAgeHours`. */
export class CamaraSimSwap implements CarrierCheck {
  /** The scope the description's `/check` asks of a token (its openId security). */
  static readonly scope = 'sim-swap:check';

  constructor(
    private readonly api: CamaraApi,
    /** SIM_SWAP_MAX_AGE_HOURS: the description allows 1 to 2400. */
    private readonly maxAgeHours: number,
  ) {}

  async flagged(e164: string, signal: AbortSignal): Promise<boolean> {
    const answer = await this.api.post('/sim-swap/v2/check', { phoneNumber: e164, maxAge: this.maxAgeHours }, signal);
    if (typeof answer.swapped !== 'boolean') throw new Error('CAMARA SIM Swap answered without swapped');
    return answer.swapped;
  }
}
