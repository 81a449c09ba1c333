import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { clientVisibleError } from '../../src/webhooks/delivery-log.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { succeedVerification, waitFor } from './helpers.js';

it('tells a client that a destination was refused or did not resolve, never how the resolver answered', () => {
  assert.equal(clientVisibleError('destination refused: evil.test resolves to 127.0.0.1 is a loopback address'), 'destination refused: not a public address');
  assert.equal(clientVisibleError('ENOTFOUND getaddrinfo ENOTFOUND evil.test'), 'could not resolve the destination');
  assert.equal(clientVisibleError('no address found for evil.test'), 'could not resolve the destination');
  assert.equal(clientVisibleError('EAI_AGAIN getaddrinfo EAI_AGAIN evil.test'), 'could not resolve the destination');
  assert.equal(clientVisibleError('HTTP 500'), 'HTTP 500');
  assert.equal(clientVisibleError(null), null);
});

/** Contract 4: the delivery log a client reads is no oracle into the service's network; the operator keeps the detail. */
forEachDatabase('webhook errors as a client reads them', (kind) => {
  let h: Harness;
  before(async () => {
    // Private destinations refused, as in production.
    // A name that resolves to this machine: refused when delivered (a literal address is refused at create).
    h = await createHarness(kind, {
      env: { PHONE_COOLDOWN_SECONDS: '0' },
      clock: new TestClock(Date.now()),
      webhookLookup: async (name) => (name === 'loopback.test' ? [{ address: '127.0.0.1', family: 4 }] : []),
    });
  });
  after(() => h.close());

  it('shows a refused destination without its address, and the operator the whole reason', async () => {
    const client = await h.client();
    const token = await h.token(undefined, client);
    const { id } = await succeedVerification(h, token, 'http://loopback.test:9/hooks');
    await h.services.webhookWorker.idle();
    const seen = await waitFor('the refused attempt', async () => {
      const res = await h.call('GET', `/v1/otp/${id}/webhooks`, token);
      const [event] = (res.json() as { data: { lastError: string | null; attempts: { error: string | null }[] }[] }).data;
      return event?.lastError ? event : undefined;
    });
    assert.equal(seen.lastError, 'destination refused: not a public address');
    assert.deepEqual(seen.attempts.map((a) => a.error), ['destination refused: not a public address']);
    const [stored] = await h.services.webhooks.forVerification(id);
    assert.ok(stored);
    const shown = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.show', id: stored.id });
    assert.ok(shown.ok);
    assert.match(JSON.stringify(shown.value), /127\.0\.0\.1 is a loopback address/);
  });
});
