import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createVerification, e164Of, expectV1Error, nextLocalNumber, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { gatewayReceipt } from '../support/gateway.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

/** How the gateway answers one send: a status and an optional JSON body. */
type Answer = { status: number; body?: unknown };

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const publicBase = 'https://otp.example.test';

interface Delivered extends RecordBody {
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number; updatedAt: string };
}

/**
 * Contract 3.4 and 8, end to end through a real provider module (`http`, the operator's gateway) against a real
 * local gateway: the provider's answer decides, receipts come back signed to /callbacks/http and move the record,
 * a refused or undelivered send fails over to the next provider (`log`), and with none left the verification is
 * FAILED, UNDELIVERABLE, with its event.
 */
forEachDatabase('delivery through providers, receipts and failover', (kind) => {
  let gateway: Receiver;
  /** Scripted answers by destination number; unscripted sends are accepted. */
  const answers = new Map<string, Answer[]>();
  const answer = (req: { body: string }, res: http.ServerResponse) => {
    const { verificationId, to } = JSON.parse(req.body) as { verificationId: string; to: string };
    const next = answers.get(to)?.shift() ?? { status: 200, body: { messageId: `gw-${verificationId}` } };
    res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body === undefined ? '' : JSON.stringify(next.body));
  };
  let failover: Harness;
  let single: Harness;
  before(async () => {
    gateway = await startReceiver((req, res) => answer(req, res));
    const env = (providers: string) => ({
      SMS_PROVIDER: providers,
      HTTP_GATEWAY_URL: gateway.url,
      HTTP_GATEWAY_SECRET: secret,
      PUBLIC_BASE_URL: publicBase,
      SEND_RETRY_DELAYS: '2,10',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    failover = await createHarness(kind, { env: env('http,log') });
    single = await createHarness(kind, { env: env('http') });
  });
  after(async () => {
    await failover.close();
    await single.close();
    await gateway.close();
  });

  const record = async (h: Harness, token: string, id: string): Promise<Delivered> => {
    const res = await h.call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Delivered }).data;
  };
  const settled = async (h: Harness) => {
    await h.services.sendWorker.idle();
  };
  /** A receipt as the gateway posts it, signed the Standard Webhooks way. */
  const callback = (h: Harness, body: unknown, sign: string = secret) => gatewayReceipt(h, body, sign);

  describe('happy', () => {
    it('sends through the first provider; a signed receipt marks it DELIVERED; a repeat changes nothing', async () => {
      const token = await failover.token();
      const v = await createVerification(failover, token);
      await settled(failover);
      const sentRecord = await record(failover, token, v.id);
      assert.deepEqual(
        { provider: sentRecord.delivery.provider, status: sentRecord.delivery.status, sends: sentRecord.delivery.sends, channel: sentRecord.delivery.channel },
        { provider: 'http', status: 'SENT', sends: 1, channel: 'SMS' },
      );
      const request = gateway.requests.find((r) => r.body.includes(v.id));
      assert.ok(request);
      const sentBody = JSON.parse(request.body) as { to: string; text: string; callbackUrl: string };
      assert.equal(sentBody.to, v.phoneNumber);
      assert.ok(sentBody.text.includes(v.otp));
      assert.equal(sentBody.callbackUrl, `${publicBase}/callbacks/http`);
      const ok = await callback(failover, { messageId: `gw-${v.id}`, status: 'DELIVERED' });
      assert.equal(ok.statusCode, 200, ok.body);
      const delivered = await record(failover, token, v.id);
      assert.equal(delivered.delivery.status, 'DELIVERED');
      assert.equal(delivered.status, 'PENDING');
      const again = await callback(failover, { messageId: `gw-${v.id}`, status: 'DELIVERED' });
      assert.equal(again.statusCode, 200);
      assert.deepEqual(await record(failover, token, v.id), delivered);
    });

    it('acknowledges and ignores a receipt for a message it never sent', async () => {
      const res = await callback(failover, { messageId: 'nobody-sent-this', status: 'DELIVERED' });
      assert.equal(res.statusCode, 200, res.body);
    });
  });

  describe('failover', () => {
    it('moves a refused send to the next provider at once', async () => {
      const token = await failover.token();
      const w = await createVerificationScripted(failover, token, [{ status: 422, body: { error: 'number barred' } }]);
      await settled(failover);
      const r = await record(failover, token, w.id);
      assert.deepEqual({ provider: r.delivery.provider, status: r.delivery.status, sends: r.delivery.sends }, { provider: 'log', status: 'SENT', sends: 1 });
      assert.equal(r.status, 'PENDING');
      const stored = await failover.services.messages.forVerification(w.id);
      assert.equal(stored.length, 1, 'the log provider took it');
    });

    it('moves a send to the next provider when the first one keeps failing', async () => {
      const token = await failover.token();
      const v = await createVerificationScripted(failover, token, [{ status: 503 }, { status: 503 }]);
      await settled(failover);
      let r = await record(failover, token, v.id);
      assert.equal(r.delivery.status, 'QUEUED', 'a transient failure is retried');
      failover.clock.advance(2000);
      await failover.services.sendWorker.runOnce();
      await settled(failover);
      r = await record(failover, token, v.id);
      assert.deepEqual({ provider: r.delivery.provider, status: r.delivery.status }, { provider: 'log', status: 'SENT' });
    });

    it('fails an undelivered send over to the next provider', async () => {
      const token = await failover.token();
      const v = await createVerification(failover, token);
      await settled(failover);
      const res = await callback(failover, { messageId: `gw-${v.id}`, status: 'UNDELIVERED', detail: 'absent subscriber' });
      assert.equal(res.statusCode, 200, res.body);
      await settled(failover);
      const r = await record(failover, token, v.id);
      assert.deepEqual({ provider: r.delivery.provider, status: r.delivery.status, sends: r.delivery.sends }, { provider: 'log', status: 'SENT', sends: 2 });
      assert.equal(r.status, 'PENDING');
      // A late repeat of the same receipt is about an older send: nothing moves twice.
      await callback(failover, { messageId: `gw-${v.id}`, status: 'UNDELIVERED' });
      await settled(failover);
      assert.deepEqual((await record(failover, token, v.id)).delivery, r.delivery);
    });
  });

  describe('error', () => {
    it('turns FAILED with UNDELIVERABLE and its event when the only provider refuses', async () => {
      const token = await single.token();
      const v = await createVerificationScripted(single, token, [{ status: 422, body: { error: 'number barred' } }], 'https://receiver.example.test/hooks');
      await settled(single);
      const r = await record(single, token, v.id);
      assert.equal(r.status, 'FAILED');
      assert.equal(r.failureReason, 'UNDELIVERABLE');
      assert.equal(r.delivery.status, 'FAILED');
      const [event] = await single.services.webhooks.forVerification(v.id);
      assert.equal(event?.kind, 'action.otp.failed');
      assert.equal((event?.payload as { data: { failureReason: string } }).data.failureReason, 'UNDELIVERABLE');
      const verify = expectV1Error(await single.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp }), 409, 'VERIFICATION_NOT_PENDING');
      assert.equal(verify.data?.status, 'FAILED');
    });

    it('turns FAILED with UNDELIVERABLE when the only provider reports the message undelivered', async () => {
      const token = await single.token();
      const v = await createVerification(single, token);
      await settled(single);
      assert.equal((await callback(single, [{ messageId: `gw-${v.id}`, status: 'UNDELIVERED' }])).statusCode, 200);
      const r = await record(single, token, v.id);
      assert.deepEqual({ status: r.status, failureReason: r.failureReason, delivery: r.delivery.status }, { status: 'FAILED', failureReason: 'UNDELIVERABLE', delivery: 'UNDELIVERED' });
    });
  });

  describe('security', () => {
    it('refuses an unsigned or wrongly signed receipt with 403 and changes nothing', async () => {
      const token = await single.token();
      const v = await createVerification(single, token);
      await settled(single);
      const before = await record(single, token, v.id);
      const unsigned = await single.app.inject({
        method: 'POST',
        url: '/callbacks/http',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ messageId: `gw-${v.id}`, status: 'UNDELIVERED' }),
      });
      expectV1Error(unsigned, 403, 'CALLBACK_FORBIDDEN');
      const forged = await callback(single, { messageId: `gw-${v.id}`, status: 'UNDELIVERED' }, `whsec_${randomBytes(32).toString('base64')}`);
      expectV1Error(forged, 403, 'CALLBACK_FORBIDDEN');
      assert.deepEqual(await record(single, token, v.id), before);
    });

    it('answers 404 for a provider that is not configured or sends no callbacks', async () => {
      expectV1Error(await single.app.inject({ method: 'POST', url: '/callbacks/twilio', payload: '' }), 404, 'NOT_FOUND');
    });
  });

  /** Creates a verification of a fresh number whose sends the gateway answers as scripted. */
  async function createVerificationScripted(h: Harness, token: string, script: Answer[], webhookUrl?: string): Promise<RecordBody> {
    const phoneNumber = nextLocalNumber();
    answers.set(e164Of(phoneNumber), [...script]);
    return createVerification(h, token, { phoneNumber, ...(webhookUrl && { webhookUrl }) });
  }
});
