import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { expectV1Error, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

let range = 0;
/** Local numbers of a range (+234 803 RRRR xxx) no other test of this run uses: `n` is the last 3 digits. */
const freshRange = (): ((n: number) => string) => {
  range += 1;
  const r = String((process.pid * 23 + range * 13) % 10_000).padStart(4, '0');
  return (n) => `0803${r}${String(n).padStart(3, '0')}`;
};

/** Contract 14: resends count wherever sends count (prefix velocity, conversion, the daily quota). */
forEachDatabase('resends count as sends', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { PREFIX_LIMIT_COUNT: '4', PREFIX_LIMIT_WINDOW_SECONDS: '600', PHONE_COOLDOWN_SECONDS: '30' } });
  });
  after(() => h.close());

  const create = (token: string, phoneNumber: string) => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber });

  it('counts a resend toward prefix velocity: two creates resent once fill a limit of four', async () => {
    const number = freshRange();
    const token = await h.token();
    const made = [];
    for (let n = 0; n < 2; n += 1) made.push((await create(token, number(n))).json<{ data: RecordBody }>().data);
    h.clock.advance(31_000);
    for (const v of made) assert.equal((await h.call('POST', `/v1/otp/${v.id}/resend`, token)).statusCode, 200);
    expectV1Error(await create(token, number(2)), 403, 'NUMBER_NOT_ALLOWED');
  });

  it('counts each send a provider took, resends included, in the conversion figures', async () => {
    const token = await h.token();
    const v = (await h.call('POST', '/v1/otp/request', token, { countryCode: '+233', phoneNumber: '0241234567' })).json<{ data: RecordBody }>().data;
    await h.services.sendWorker.idle();
    h.clock.advance(31_000);
    assert.equal((await h.call('POST', `/v1/otp/${v.id}/resend`, token)).statusCode, 200);
    await h.services.sendWorker.idle();
    const traffic = await h.services.conversionStore.traffic(new Date(h.clock.now().getTime() - 3_600_000));
    assert.deepEqual(traffic.filter((t) => t.regionCode === 'GH').map((t) => t.sends), [2]);
  });
});
