import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { after, before, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createVerification, eventually, nextLocalNumber, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { signedReceiptHeaders } from '../support/gateway.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

interface Delivered extends RecordBody {
  failureReason: string | null;
  delivery: { provider: string | null; status: string; sends: number };
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Contract 8: a receipt is never lost, even one that comes before the send's result is committed. The gateway
 * here (the `http` provider's peer, a real local server) posts its receipt to the service first and only then
 * answers the send, as a provider that reports at once, or answers late, does. Before, the receipt was answered
 * 200 and dropped (no DELIVERED, no failover, no FAILED); now it is kept and applies when the acceptance commits,
 * in this process or (PostgreSQL) when the receipt reached another instance.
 */
forEachDatabase('receipts that come before their send is recorded', (kind) => {
  let gateway: Receiver;
  let h: Harness;
  /** Where the gateway posts its receipt: this instance, or a second one on the same database. */
  let receiptsTo: FastifyInstance | null = null;
  /** The receipt status by destination. */
  const statusFor = new Map<string, 'DELIVERED' | 'UNDELIVERED'>();
  const callbackStatuses: number[] = [];
  const env = () => ({
    SMS_PROVIDER: 'http',
    HTTP_GATEWAY_URL: gateway.url,
    HTTP_GATEWAY_SECRET: secret,
    PUBLIC_BASE_URL: 'https://otp.example.test',
  });
  before(async () => {
    gateway = await startReceiver(async (req, res) => {
      const { verificationId, to } = JSON.parse(req.body) as { verificationId: string; to: string };
      const messageId = `gw-${verificationId}`;
      const status = statusFor.get(to);
      if (status && receiptsTo) {
        const payload = JSON.stringify({ messageId, status, detail: 'early' });
        const answer = await receiptsTo.inject({
          method: 'POST',
          url: '/callbacks/http',
          headers: { 'content-type': 'application/json', ...signedReceiptHeaders(new Webhook(secret), payload) },
          payload,
        });
        callbackStatuses.push(answer.statusCode);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId }));
    });
    h = await createHarness(kind, { env: env() });
    receiptsTo = h.app;
  });
  after(async () => {
    await h.close();
    await gateway.close();
  });

  const record = async (token: string, id: string): Promise<Delivered> =>
    ((await h.call('GET', `/v1/otp/${id}`, token)).json() as { data: Delivered }).data;

  /** `whileWaiting` runs in each poll, as the workers' once-a-second tasks run in a server. */
  async function early(status: 'DELIVERED' | 'UNDELIVERED', whileWaiting: () => Promise<unknown> = async () => undefined): Promise<Delivered> {
    const token = await h.token();
    const phoneNumber = nextLocalNumber();
    statusFor.set(`+234${phoneNumber.slice(1)}`, status);
    const before = callbackStatuses.length;
    const v = await createVerification(h, token, { phoneNumber });
    await h.services.sendWorker.idle();
    assert.equal(callbackStatuses.length, before + 1, 'the receipt was posted before the send was answered');
    assert.equal(callbackStatuses.at(-1), 200);
    await eventually(async () => {
      await whileWaiting();
      return (await record(token, v.id)).delivery.status === (status === 'DELIVERED' ? 'DELIVERED' : 'UNDELIVERED');
    }, 5_000);
    return record(token, v.id);
  }

  it('applies a DELIVERED that came first', async () => {
    const r = await early('DELIVERED');
    assert.deepEqual({ status: r.status, provider: r.delivery.provider, sends: r.delivery.sends }, { status: 'PENDING', provider: 'http', sends: 1 });
  });

  it('fails the verification on an UNDELIVERED that came first, with no other provider', async () => {
    const r = await early('UNDELIVERED');
    assert.deepEqual({ status: r.status, failureReason: r.failureReason }, { status: 'FAILED', failureReason: 'UNDELIVERABLE' });
  });

  it('applies a receipt that came first to another instance', { skip: kind === 'pglite' ? 'one process holds an embedded database' : false }, async () => {
    await withSecondInstance(h, env(), async (other) => {
      receiptsTo = other.app;
      try {
        // This instance has kept no receipt itself and its last look found none kept: it learns of the one the
        // other instance keeps from its workers' once-a-second look, which applies it once the send is recorded.
        assert.deepEqual(await h.services.verificationStore.parkedReceipts(100), []);
        const r = await early('UNDELIVERED', () => h.services.deliveries.applyParkedReceipts(100));
        assert.deepEqual({ status: r.status, failureReason: r.failureReason }, { status: 'FAILED', failureReason: 'UNDELIVERABLE' });
      } finally {
        receiptsTo = h.app;
      }
    });
  });
});
