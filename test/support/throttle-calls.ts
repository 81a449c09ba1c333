import assert from 'node:assert/strict';
import type { Services } from '../../src/services.js';
import type { Harness } from './harness.js';

/**
 * Reads conversion and the countries each client knows, as the background task does, once every code sent is
 * recorded as sent: the read counts only sent codes, and a test reads its codes from the create's answer, maybe
 * before the provider's acceptance of the last one is committed.
 */
export async function readConversion(services: Pick<Services, 'sendWorker' | 'conversion'>): Promise<void> {
  await services.sendWorker.idle();
  await services.conversion.refresh();
}

/** A created verification as the fraud tests keep it: its id and its code. */
export interface Made {
  readonly id: string;
  readonly otp: string;
}

/** The /v1 calls the throttle and fraud tests make, on the harness `h()` gives when called. */
export function harnessCalls(h: () => Harness) {
  const create = (token: string, body: { countryCode: string; phoneNumber: string; signals?: Record<string, string> }, app = h().app) =>
    app.inject({ method: 'POST', url: '/v1/otp/request', headers: { authorization: `Bearer ${token}` }, payload: body });
  const made = (res: { statusCode: number; body: string; json: () => unknown }): Made => {
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Made }).data;
  };
  const verify = async (token: string, v: Made) => assert.equal((await h().call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp })).statusCode, 200);
  const resend = (token: string, v: Made) => h().app.inject({ method: 'POST', url: `/v1/otp/${v.id}/resend`, headers: { authorization: `Bearer ${token}` } });
  /** Reads conversion and the countries each client knows, as the background task does; the clock then moves on. */
  const refresh = async (services = h().services) => {
    await readConversion(services);
    h().clock.advance(1);
  };
  return { create, made, verify, resend, refresh };
}
