import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { detailFields, expectV1Error, nextLocalNumber, sendCounts } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * Issue 17: with a real SMS provider and CALL_PROVIDER unset, a DROPPED_CALL create was accepted and read SENT
 * through `log` while nothing left the machine. A channel nobody named beside a real provider is not offered.
 */
forEachDatabase('a create of a channel with no provider', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      env: { CALL_PROVIDER: 'http', HTTP_GATEWAY_URL: 'https://gw.example/send', HTTP_GATEWAY_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, PUBLIC_BASE_URL: 'https://otp.example' },
    });
  });
  after(() => h.close());

  it('is a 400 naming the type and the setting, and nothing is stored or sent', async () => {
    const token = await h.token();
    const before = await sendCounts(h);
    const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), type: 'SEND_SMS' });
    const body = expectV1Error(res, 400, 'VALIDATION_ERROR');
    assert.deepEqual(detailFields(body), ['type']);
    assert.match(JSON.stringify(body.error.details), /SEND_SMS is not offered by this service: it has no SMS provider \(SMS_PROVIDER\)/);
    assert.deepEqual(await sendCounts(h), before);
    const rows = await h.services.db.db.selectFrom('verifications').select('id').execute();
    assert.equal(rows.length, 0);
  });
});
