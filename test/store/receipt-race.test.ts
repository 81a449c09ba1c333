import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type pg from 'pg';
import { createVerification } from '../support/api.js';
import { postgresSkip } from '../support/databases.js';
import type { Harness } from '../support/harness.js';
import { harnessWithSession, waitUntilBlocked } from '../support/locks.js';

/**
 * A receipt that comes while its send's acceptance is being recorded (an SMSC sends deliver_sm right after
 * submit_sm_resp) is kept, and applies once the acceptance is committed. When each ran inside the other's window,
 * neither saw the other: the receipt stayed kept until the workers' once-a-second look, or, where that look did not
 * run, for good. Both orders are forced here with a lock another session holds, so that each side's second look
 * is what applies the receipt.
 */
describe('a receipt racing its acceptance [postgres]', { skip: postgresSkip }, () => {
  const suite = harnessWithSession();
  let h: Harness;
  let other: pg.Client;
  before(() => {
    ({ h, other } = suite);
  });

  const accepted = (verificationId: string, messageId: string) =>
    h.services.verificationStore.recordSent({
      verificationId,
      channel: 'sms',
      deliveryChannel: 'SMS',
      provider: 'race-test',
      account: 'bind-1',
      messageId,
      attempt: 1,
      turnAttempts: 1,
      status: 'SENT',
      at: new Date(),
      failoverAt: null, cost: null, charge: '0', reported: null, route: 'default',
    });
  const receipt = (messageId: string) =>
    h.services.deliveries.recordReceipt('race-test', { messageId, status: 'DELIVERED', detail: null, at: null }, 'bind-1');
  const deliveryOf = async (token: string, id: string) =>
    ((await h.call('GET', `/v1/otp/${id}`, token)).json() as { data: { delivery: { status: string } } }).data.delivery.status;

  it('the acceptance, kept waiting while the receipt is kept, finds the receipt once it commits', async () => {
    const token = await h.token();
    const v = await createVerification(h, token);
    await h.services.sendWorker.idle();
    await other.query('BEGIN');
    await other.query('SELECT id FROM verifications WHERE id = $1 FOR UPDATE', [v.id]);
    // The acceptance's statement has begun (its snapshot taken) and waits on the verification.
    const recorded = accepted(v.id, 'R1');
    await waitUntilBlocked(other);
    assert.equal(await receipt('R1'), 'parked', 'the acceptance is not committed yet');
    await other.query('COMMIT');
    assert.deepEqual(await recorded, { tookIdFrom: null, parked: true });
  });

  it('the receipt, read before the acceptance and kept after it, applies at once', async () => {
    const token = await h.token();
    const v = await createVerification(h, token);
    await h.services.sendWorker.idle();
    await other.query('BEGIN');
    // The receipt has looked for its send (not there yet) and waits to be kept.
    await other.query('LOCK TABLE parked_receipts IN SHARE MODE');
    const recorded = receipt('R2');
    await waitUntilBlocked(other);
    assert.deepEqual(await accepted(v.id, 'R2'), { tookIdFrom: null, parked: false }, 'the receipt is not kept yet');
    await other.query('COMMIT');
    assert.equal(await recorded, 'recorded');
    assert.equal(await deliveryOf(token, v.id), 'DELIVERED');
    assert.deepEqual(await h.services.verificationStore.parkedReceipts(100, { provider: 'race-test', account: 'bind-1', messageId: 'R2' }), []);
  });
});
