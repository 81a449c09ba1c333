import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { createVerification } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * What the one statement that records acceptances (SqlVerificationStore.recordSent) reports back: the send an id
 * was taken over from (the worker warns of a provider that numbers its messages again), and whether receipts
 * for the id came first and were kept. Both are read only where they can be true, so each is checked here both
 * ways, and within one group of acceptances written together.
 */
forEachDatabase('recording accepted sends', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  const sent = (verificationId: string, messageId: string) => ({
    verificationId,
    channel: 'sms' as const,
    deliveryChannel: 'SMS' as const,
    provider: 'acceptance-test',
    account: 'bind-1',
    messageId,
    attempt: 1,
    turnAttempts: 1,
    status: 'SENT' as const,
    at: new Date(),
    failoverAt: null, cost: null, charge: '0', reported: null, route: 'default',
  });

  const three = async (token: string) => {
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => createVerification(h, token)));
    assert.ok(a && b && c);
    return [a, b, c] as const;
  };

  it('names the verification an id was taken from, only when another had it', async () => {
    const token = await h.token();
    const [a, b, c] = await three(token);
    const store = h.services.verificationStore;
    const first = await Promise.all([store.recordSent(sent(a.id, 'X1')), store.recordSent(sent(c.id, 'X2'))]);
    assert.deepEqual(first, [
      { tookIdFrom: null, parked: false },
      { tookIdFrom: null, parked: false },
    ]);
    // The same id again for the same send (a resend the provider numbered alike) takes nothing from anyone.
    assert.deepEqual(await store.recordSent(sent(a.id, 'X1')), { tookIdFrom: null, parked: false });
    const [takeover, fresh] = await Promise.all([store.recordSent(sent(b.id, 'X1')), store.recordSent(sent(b.id, 'X3'))]);
    assert.deepEqual(takeover, { tookIdFrom: a.id, parked: false });
    assert.deepEqual(fresh, { tookIdFrom: null, parked: false });
    const { rows } = await sql<{ verification_id: string }>`
      SELECT verification_id::text FROM provider_messages WHERE provider = 'acceptance-test' AND message_id = 'X1'`.execute(h.services.db.db);
    assert.deepEqual(rows, [{ verification_id: b.id }]);
  });

  it('says which acceptances have receipts kept for them, once a look for kept receipts found any', async () => {
    const token = await h.token();
    const [a, b] = await three(token);
    await sql`
      INSERT INTO parked_receipts (provider, account, message_id, status, received_at)
      VALUES ('acceptance-test', 'bind-1', 'P1', 'DELIVERED', now())`.execute(h.services.db.db);
    try {
      // Kept by "another instance": this one learns of it from its workers' once-a-second look, as here.
      assert.deepEqual(await h.services.verificationStore.parkedReceipts(100), [], 'no send has P1 yet');
      const written = await Promise.all([h.services.verificationStore.recordSent(sent(a.id, 'P1')), h.services.verificationStore.recordSent(sent(b.id, 'P2'))]);
      assert.deepEqual(written, [
        { tookIdFrom: null, parked: true },
        { tookIdFrom: null, parked: false },
      ]);
    } finally {
      await sql`DELETE FROM parked_receipts WHERE provider = 'acceptance-test'`.execute(h.services.db.db);
    }
  });
});
