import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type pg from 'pg';
import { UnavailableError } from '../../src/domain/unavailable.js';
import { retryingConflicts } from '../../src/store/conflicts.js';
import { createVerification } from '../support/api.js';
import { postgresSkip } from '../support/databases.js';
import type { Harness } from '../support/harness.js';
import { harnessWithSession, waitUntilBlocked } from '../support/locks.js';

/**
 * Every writer of a verification and its send job locks the verification first. A resend does (it reads the
 * verification for update, then the job); recording an acceptance once ran the job's update first, and a resend
 * of the same verification at that moment deadlocked with it: the resend answered 500, the send came back late.
 */
describe('lock order of a verification and its send job [postgres]', { skip: postgresSkip }, () => {
  const suite = harnessWithSession();
  let h: Harness;
  let other: pg.Client;
  before(() => {
    ({ h, other } = suite);
  });

  it('recording an acceptance waits on the verification before it touches the job', async () => {
    const token = await h.token();
    const v = await createVerification(h, token);
    await h.services.sendWorker.idle();
    // A resend holds the verification, as its transaction script does before it reads the job.
    await other.query('BEGIN');
    await other.query('SELECT id FROM verifications WHERE id = $1 FOR UPDATE', [v.id]);
    const recorded = h.services.verificationStore.recordSent({
      verificationId: v.id,
      channel: 'sms',
      deliveryChannel: 'SMS',
      provider: 'lock-order-test',
      account: 'bind-1',
      messageId: 'L1',
      attempt: 2,
      turnAttempts: 1,
      status: 'SENT',
      at: new Date(),
      failoverAt: null, cost: null, charge: '0', reported: null, route: 'default',
    });
    // Once the acceptance is waiting (on the verification), the job must still be free for the resend to take.
    await waitUntilBlocked(other);
    const job = await other.query('SELECT verification_id FROM send_jobs WHERE verification_id = $1 FOR UPDATE NOWAIT', [v.id]);
    assert.equal(job.rowCount, 1);
    await other.query('COMMIT');
    assert.deepEqual(await recorded, { tookIdFrom: null, parked: false });
  });

  it('resends racing their sends answer 200 every time', async () => {
    const codes = new Map<number, number>();
    for (let n = 0; n < 40; n++) {
      const token = await h.token();
      const v = await createVerification(h, token);
      for (let i = 0; i < 2; i++) {
        h.clock.advance(60_000);
        const res = await h.call('POST', `/v1/otp/${v.id}/resend`, token);
        codes.set(res.statusCode, (codes.get(res.statusCode) ?? 0) + 1);
      }
    }
    assert.deepEqual([...codes], [[200, 80]]);
  });
});

describe('a transaction the database ended in a conflict', () => {
  const conflict = (code: string) => Object.assign(new Error('deadlock detected'), { code });

  it('is made again, and its result is the one answer', async () => {
    let tries = 0;
    const result = await retryingConflicts(async () => {
      tries += 1;
      if (tries < 3) throw conflict(tries === 1 ? '40P01' : '40001');
      return 'done';
    });
    assert.deepEqual([result, tries], ['done', 3]);
  });

  it('becomes unavailable (503, in a second) when it keeps conflicting, never an unexpected error', async () => {
    let tries = 0;
    const failed = await retryingConflicts(async () => {
      tries += 1;
      throw conflict('40P01');
    }).catch((err: unknown) => err);
    assert.ok(failed instanceof UnavailableError);
    assert.deepEqual([failed.retryAfterSeconds, tries], [1, 3]);
  });

  it('lets any other error through at once', async () => {
    let tries = 0;
    const failed = await retryingConflicts(async () => {
      tries += 1;
      throw conflict('23505');
    }).catch((err: unknown) => err);
    assert.deepEqual([(failed as { code: string }).code, tries], ['23505', 1]);
  });
});
