import { Pool } from 'undici';
import type { CarrierCheck } from '../domain/carrier-checks.js';
import { asObject, jsonObject, readBounded, type HttpBaseUrl } from '../providers/http-provider.js';

/** The Twilio account the lookups are billed to (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN). */
export interface TwilioAccount {
  readonly accountSid: string;
  readonly authToken: string;
}

/**
 * Twilio Lookup v2's `sim_swap` field (node_modules/@twilio-alpha/mcp/twilio-oai/spec/json/twilio_lookups_v2.json):
 * `last_sim_swap.swapped_in_period`. The period is the one Twilio holds for the account (`swapped_period`), not
 * SIM_SWAP_MAX_AGE_HOURS: the lookup takes no period. A `sim_swap` that is null or carries an `error_code` (the
 * network did not say) is a failed check.
 */
export class TwilioSimSwap implements CarrierCheck {
  private readonly pool: Pool;
  private readonly authorization: string;

  constructor(
    private readonly base: HttpBaseUrl,
    account: TwilioAccount,
  ) {
    this.pool = new Pool(base.origin, { connections: 8 });
    this.authorization = `Basic ${Buffer.from(`${account.accountSid}:${account.authToken}`).toString('base64')}`;
  }

  async flagged(e164: string, signal: AbortSignal): Promise<boolean> {
    const answer = await this.pool.request({
      method: 'GET',
      path: `${this.base.pathPrefix}/v2/PhoneNumbers/${encodeURIComponent(e164)}?Fields=sim_swap`,
      headers: { authorization: this.authorization, accept: 'application/json', 'user-agent': 'otp-service' },
      signal,
    });
    const body = jsonObject(await readBounded(answer.body));
    if (answer.statusCode !== 200) throw new Error(`Twilio Lookup answered ${answer.statusCode}`);
    const simSwap = asObject(body?.sim_swap);
    const swapped = asObject(simSwap?.last_sim_swap)?.swapped_in_period;
    if (simSwap === null || (simSwap.error_code !== null && simSwap.error_code !== undefined) || typeof swapped !== 'boolean') {
      throw new Error('Twilio Lookup gave no sim_swap answer');
    }
    return swapped;
  }
}
