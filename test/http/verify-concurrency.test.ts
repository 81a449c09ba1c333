import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createVerification, eventKinds } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Verify saves optimistically; racing calls must still count every attempt once and end the verification once. */
forEachDatabase('concurrent verify calls', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { OTP_MAX_ATTEMPTS: '5' } });
  });
  after(() => h.close());

  const race = (token: string, id: string, otp: string, n: number) =>
    Promise.all(Array.from({ length: n }, () => h.call('POST', '/v1/otp/verify', token, { id, otp })));

  it('counts each of many simultaneous wrong codes once and fails the verification exactly once', async () => {
    const token = await h.token();
    const v = await createVerification(h, token);
    const wrong = v.otp === '000000' ? '111111' : '000000';
    const answers = await race(token, v.id, wrong, 9);
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [409, 409, 409, 409, 422, 422, 422, 422, 422]);
    const counters = answers.filter((a) => a.statusCode === 422).map((a) => (a.json() as { data: { counter: number } }).data.counter);
    assert.deepEqual(counters.sort(), [1, 2, 3, 4, 5], 'every attempt saw its own count');
    const stored = await h.services.db.db.selectFrom('verifications').select(['status', 'counter']).where('id', '=', v.id).executeTakeFirstOrThrow();
    assert.deepEqual(stored, { status: 'FAILED', counter: 5 });
    assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
  });

  it('lets exactly one of many simultaneous right codes succeed', async () => {
    const token = await h.token();
    const v = await createVerification(h, token);
    const answers = await race(token, v.id, v.otp, 6);
    assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 409, 409, 409, 409, 409]);
    assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
  });
});
