import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { formatResult } from '../../src/cli/format.js';
import { adminDeps } from '../../src/admin/deps.js';
import { createVerification } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

forEachDatabase('otp-service webhooks replay', (kind) => {
  let h: Harness;
  before(async () => {
    // Events stay queued (no worker claims them), as after a failed delivery.
    h = await createHarness(kind, { queuePath: true });
  });
  after(() => h.close());

  it('says what it did: the new state, where it goes, and how to follow it', async () => {
    const token = await h.token();
    const created = await createVerification(h, token, { webhookUrl: 'https://hooks.example.com/otp' });
    const verified = await h.call('POST', '/v1/otp/verify', token, { id: created.id, otp: created.otp });
    assert.equal(verified.statusCode, 200, verified.body);
    const event = await h.services.db.db
      .selectFrom('events')
      .select('id')
      .where('verification_id', '=', created.id)
      .executeTakeFirstOrThrow();
    await h.services.db.db
      .updateTable('events')
      .set({ delivery_status: 'failed', attempts: 8, last_error: 'HTTP 500', next_attempt_at: null })
      .where('id', '=', event.id)
      .execute();
    const command = { name: 'webhooks.replay', id: event.id } as const;
    const result = await runAdminCommand(adminDeps(h.services), command);
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal((result.value as { deliveryStatus: string }).deliveryStatus, 'pending', 'the new state');
    const text = formatResult(command, result.value);
    assert.equal(
      text,
      [
        `Replayed event ${event.id} (action.otp.success of verification ${created.id}).`,
        'It is pending again and will be sent to https://hooks.example.com/otp now, with a fresh retry schedule;',
        'its 8 earlier attempts stay in its log.',
        `Follow it with: otp-service webhooks show ${event.id}`,
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(text, /failed|HTTP 500/, 'not the state before the replay');
  });
});
