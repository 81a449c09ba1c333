import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, it } from 'node:test';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, succeedVerification, verifySignature, waitFor, webhookEnv, type Receiver } from './helpers.js';

/** As the server runs it: a verify's webhook goes out from the committing process, with no claim query. */
forEachDatabase('webhooks delivered on commit', (kind) => {
  let h: Harness;
  let client: ClientCredentials;
  let token: string;
  let receiver: Receiver;
  const held: http.ServerResponse[] = [];
  let hold = false;
  before(async () => {
    // The held request stays held while the test looks at the lease: a busy machine may take seconds over it, and
    // a timed-out attempt would wait for a retry that the still clock never brings.
    const env = { ...webhookEnv, WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_LEASE_MS: '120000' };
    h = await createHarness(kind, { env, clock: new TestClock(Date.now()) });
    client = await h.client();
    token = await h.token(undefined, client);
    receiver = await startReceiver((_req, res) => {
      if (hold) held.push(res);
      else res.writeHead(204).end();
    });
  });
  after(async () => {
    for (const res of held) res.writeHead(204).end();
    await h.services.webhookWorker.idle();
    await h.close();
    await receiver.close();
  });

  it('delivers right after the verify commits, signed, as attempt 1, without any worker run', async () => {
    const { id } = await succeedVerification(h, token, receiver.url);
    const req = await waitFor('the webhook', () => receiver.requests.find((r) => r.body.includes(id)));
    const body = verifySignature(client.webhookSecret, req) as { event: string; data: { id: string } };
    assert.equal(body.event, 'action.otp.success');
    const event = await waitFor('the delivery to be recorded', async () => {
      const [e] = await h.services.webhooks.forVerification(id);
      return e?.deliveryStatus === 'delivered' ? e : undefined;
    });
    assert.equal(req.headers['webhook-id'], event.id);
    assert.equal(event.attempts, 1);
    assert.deepEqual(event.attemptLog.map((a) => a.outcome), ['delivered']);
  });

  it('holds the event under this process\'s lease while it is in flight, so no worker claims it', async () => {
    hold = true;
    const { id } = await succeedVerification(h, token, receiver.url);
    await waitFor('the held request', () => held.length === 1);
    const [inFlight] = await h.services.webhooks.forVerification(id);
    assert.ok(inFlight?.leaseUntil, 'leased');
    assert.equal(inFlight.attempts, 1);
    assert.equal(await h.services.webhookWorker.runOnce(), false, 'nothing due for a worker');
    hold = false;
    held.shift()?.writeHead(204).end();
    await waitFor('delivered', async () => (await h.services.webhooks.forVerification(id))[0]?.deliveryStatus === 'delivered');
    assert.equal(receiver.requests.filter((r) => r.body.includes(id)).length, 1, 'sent once');
  });
});
