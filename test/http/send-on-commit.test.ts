import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createVerification, eventually } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** As the server runs it: the creating process sends the code itself, and the durable job stays as a fallback. */
forEachDatabase('sending on commit', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  const jobOf = (id: string) =>
    h.services.db.db.selectFrom('send_jobs').selectAll().where('verification_id', '=', id).executeTakeFirstOrThrow();

  it('sends the SMS right after the commit and completes its job, without the poller', async () => {
    const token = await h.token();
    const v = await createVerification(h, token);
    await eventually(async () => (await h.services.messages.forVerification(v.id)).length === 1);
    const [message] = await h.services.messages.forVerification(v.id);
    assert.ok(message?.body.startsWith(`${v.otp} is your verification code`));
    await eventually(async () => (await jobOf(v.id)).status === 'sent');
    const job = await jobOf(v.id);
    // One attempt, made here: the job was written claimed by this process, so no poller took it as well.
    assert.equal(job.attempts, 1);
    assert.equal(job.provider, 'log');
    assert.equal(await h.services.sendWorker.runOnce(), false);
    assert.equal((await h.services.messages.forVerification(v.id)).length, 1);
  });

  it('leaves the job due for any worker once the claim runs out, should the process die before sending', async () => {
    const token = await h.token();
    const v = await createVerification(h, token, { type: 'DROPPED_CALL' });
    await h.services.sendWorker.idle();
    // What a process that died after the commit leaves behind: the job as the create wrote it, pending and
    // claimed by that process until the lease ends.
    await h.services.db.db
      .updateTable('send_jobs')
      .set({ status: 'pending', provider: 'log', next_attempt_at: new Date(Date.parse(v.createdAt) + h.config.SEND_LEASE_MS) })
      .where('verification_id', '=', v.id)
      .execute();
    h.clock.advance(h.config.SEND_LEASE_MS - 1);
    await h.services.sendWorker.runOnce();
    assert.equal((await jobOf(v.id)).attempts, 1, 'not before the claim ends');
    h.clock.advance(1);
    await h.services.sendWorker.runOnce();
    const job = await jobOf(v.id);
    assert.equal(job.status, 'sent');
    assert.equal(job.attempts, 2);
    const calls = await h.services.messages.forVerification(v.id);
    assert.equal(calls.length, 2, 'sent again: at least once');
    assert.ok(calls.every((c) => c.channel === 'call' && c.sender.endsWith(v.otp)));
  });
});
