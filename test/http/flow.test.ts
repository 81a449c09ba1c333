import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

forEachDatabase('token to verified', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  it('creates, fetches and verifies an SMS verification', async () => {
    const token = await h.token();
    const created = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: '08012345678' });
    assert.equal(created.statusCode, 200, created.body);
    const body = created.json();
    assert.equal(body.status, true);
    assert.equal(body.message, 'OTP sent');
    assert.equal(body.data.status, 'PENDING');
    assert.equal(body.data.type, 'SMS');
    assert.equal(body.data.phoneNumber, '+2348012345678');
    assert.match(body.data.otp, /^\d{6}$/);
    await h.services.sendWorker.idle();
    const fetched = await h.call('GET', `/v1/otp/${body.data.id}`, token);
    assert.equal(fetched.statusCode, 200);
    // Only the delivery, and the list of sends it heads, have moved since the create's answer: the code went out
    // right after the commit.
    type Sends = Record<string, unknown> & { delivery: { status: string }; deliveries: { status: string }[] };
    const { delivery: sentDelivery, deliveries: sent, ...fetchedRest } = fetched.json().data as Sends;
    const { delivery: queued, deliveries: none, ...createdRest } = body.data as Sends;
    assert.deepEqual(fetchedRest, createdRest);
    assert.equal(queued.status, 'QUEUED');
    assert.deepEqual(none, []);
    assert.equal(sentDelivery.status, 'SENT');
    assert.deepEqual(sent.map((d) => d.status), ['SENT']);
    const verified = await h.call('POST', '/v1/otp/verify', token, { id: body.data.id, otp: body.data.otp });
    assert.equal(verified.statusCode, 200, verified.body);
    assert.equal(verified.json().data.status, 'SUCCESS');
    assert.equal(verified.json().data.counter, 1);
  });
});
