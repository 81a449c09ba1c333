import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createVerification, e164Of, eventKinds, nextLocalNumber, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { gatewayReceipt } from '../support/gateway.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

type Answer = { status: number; body?: unknown };

interface Delivered extends RecordBody {
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Contract 8, CALL_FALLBACK_TO_SMS: a dropped call no call provider can place goes out by SMS with the same code,
 * the record keeping type DROPPED_CALL with `delivery.channel` SMS. The call provider is a real module (`http`,
 * the operator's gateway) against a real local gateway that answers as scripted; SMS goes through `log`.
 */
forEachDatabase('a dropped call falling back to SMS', (kind) => {
  let gateway: Receiver;
  /** Scripted answers by destination number and channel; unscripted sends are accepted. */
  const answers = new Map<string, Answer[]>();
  const answer = (req: { body: string }, res: http.ServerResponse) => {
    const { verificationId, to, channel } = JSON.parse(req.body) as { verificationId: string; to: string; channel: string };
    const next = answers.get(`${channel} ${to}`)?.shift() ?? { status: 200, body: { messageId: `gw-${channel}-${verificationId}` } };
    res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body === undefined ? '' : JSON.stringify(next.body));
  };
  let fallback: Harness;
  let noFallback: Harness;
  let bothThroughGateway: Harness;
  before(async () => {
    gateway = await startReceiver((req, res) => answer(req, res));
    const env = (extra: Record<string, string>) => ({
      CALL_PROVIDER: 'http',
      SMS_PROVIDER: 'log',
      HTTP_GATEWAY_URL: gateway.url,
      HTTP_GATEWAY_SECRET: secret,
      PUBLIC_BASE_URL: 'https://otp.example.test',
      SEND_RETRY_DELAYS: '2',
      ...extra,
    });
    fallback = await createHarness(kind, { env: env({ CALL_FALLBACK_TO_SMS: 'true' }) });
    noFallback = await createHarness(kind, { env: env({}) });
    bothThroughGateway = await createHarness(kind, { env: env({ CALL_FALLBACK_TO_SMS: 'true', SMS_PROVIDER: 'http' }) });
  });
  after(async () => {
    await fallback.close();
    await noFallback.close();
    await bothThroughGateway.close();
    await gateway.close();
  });

  const record = async (h: Harness, token: string, id: string): Promise<Delivered> => {
    await h.services.sendWorker.idle();
    const res = await h.call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Delivered }).data;
  };
  /** A DROPPED_CALL to a fresh number whose call (and SMS) the gateway answers as scripted. */
  const droppedCall = async (h: Harness, token: string, calls: Answer[], sms: Answer[] = []) => {
    const phoneNumber = nextLocalNumber();
    answers.set(`call ${e164Of(phoneNumber)}`, [...calls]);
    answers.set(`sms ${e164Of(phoneNumber)}`, [...sms]);
    return createVerification(h, token, { phoneNumber, type: 'DROPPED_CALL' });
  };
  const gatewayRequests = (verificationId: string) =>
    gateway.requests.map((r) => JSON.parse(r.body) as Record<string, string>).filter((b) => b.verificationId === verificationId);

  describe('happy', () => {
    it('sends the same code by SMS when the only call provider refuses the call, and it verifies', async () => {
      const token = await fallback.token();
      const v = await droppedCall(fallback, token, [{ status: 422, body: { error: 'number cannot take calls' } }]);
      const r = await record(fallback, token, v.id);
      assert.equal(r.type, 'DROPPED_CALL', 'the record keeps its type');
      assert.equal(r.status, 'PENDING');
      assert.deepEqual(
        { channel: r.delivery.channel, provider: r.delivery.provider, status: r.delivery.status, sends: r.delivery.sends },
        { channel: 'SMS', provider: 'log', status: 'SENT', sends: 1 },
      );
      const [call] = gatewayRequests(v.id);
      assert.equal(call?.channel, 'call', 'the call was tried first');
      assert.equal(call.callerId, e164Of(v.pairedNumber));
      const [sms, ...more] = await fallback.services.messages.forVerification(v.id);
      assert.equal(more.length, 0);
      assert.equal(sms?.channel, 'sms');
      assert.equal(sms.sender, fallback.config.SMS_SENDER_NUMBER);
      assert.ok(sms.body.includes(v.otp), 'the SMS carries the call\'s code');
      const verified = await fallback.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp });
      assert.equal(verified.statusCode, 200, verified.body);
      assert.equal(verified.json().data.status, 'SUCCESS');
    });

    it('falls back when an accepted call is reported undelivered', async () => {
      const token = await fallback.token();
      const v = await droppedCall(fallback, token, []);
      assert.equal((await record(fallback, token, v.id)).delivery.channel, 'CALL');
      const res = await gatewayReceipt(fallback, { messageId: `gw-call-${v.id}`, status: 'UNDELIVERED', detail: 'busy' }, secret);
      assert.equal(res.statusCode, 200, res.body);
      const r = await record(fallback, token, v.id);
      assert.deepEqual({ channel: r.delivery.channel, provider: r.delivery.provider, status: r.status }, { channel: 'SMS', provider: 'log', status: 'PENDING' });
      assert.equal((await fallback.services.messages.forVerification(v.id)).length, 1);
    });

    it('falls back after the call keeps failing transiently and its retries are spent', async () => {
      const token = await fallback.token();
      const v = await droppedCall(fallback, token, [{ status: 503 }, { status: 503 }]);
      assert.equal((await record(fallback, token, v.id)).delivery.status, 'QUEUED', 'a transient failure is retried first');
      fallback.clock.advance(2000);
      await fallback.services.sendWorker.runOnce();
      const r = await record(fallback, token, v.id);
      assert.deepEqual({ channel: r.delivery.channel, provider: r.delivery.provider }, { channel: 'SMS', provider: 'log' });
      assert.equal(gatewayRequests(v.id).length, 2);
    });

    it('verifies a dropped call by the whole caller id, in E.164 or local format', async () => {
      const token = await fallback.token();
      const a = await droppedCall(fallback, token, []);
      const byE164 = await fallback.call('POST', '/v1/otp/verify', token, { id: a.id, otp: e164Of(a.pairedNumber) });
      assert.equal(byE164.statusCode, 200, byE164.body);
      const b = await droppedCall(fallback, token, []);
      const byLocal = await fallback.call('POST', '/v1/otp/verify', token, { id: b.id, otp: b.pairedNumber.replace(/^(\d{4})(\d{3})/, '$1 $2 ') });
      assert.equal(byLocal.statusCode, 200, byLocal.body);
      const c = await droppedCall(fallback, token, []);
      const other = `${e164Of(c.pairedNumber).slice(0, -1)}${(Number(c.pairedNumber.slice(-1)) + 1) % 10}`;
      const wrong = await fallback.call('POST', '/v1/otp/verify', token, { id: c.id, otp: other });
      assert.equal(wrong.statusCode, 422, wrong.body);
      assert.equal(wrong.json().data.counter, 1, 'a wrong caller id counts as an attempt');
    });
  });

  describe('error', () => {
    it('without CALL_FALLBACK_TO_SMS, a call no provider can place is FAILED, UNDELIVERABLE, and no SMS goes out', async () => {
      const token = await noFallback.token();
      const v = await droppedCall(noFallback, token, [{ status: 422, body: { error: 'barred' } }]);
      const r = await record(noFallback, token, v.id);
      assert.deepEqual(
        { status: r.status, failureReason: r.failureReason, channel: r.delivery.channel, delivery: r.delivery.status },
        { status: 'FAILED', failureReason: 'UNDELIVERABLE', channel: 'CALL', delivery: 'FAILED' },
      );
      assert.deepEqual(await noFallback.services.messages.forVerification(v.id), []);
      assert.deepEqual(await eventKinds(noFallback, v.id), ['action.otp.failed']);
    });

    it('when the fallback SMS is refused too, the verification is FAILED, UNDELIVERABLE, once', async () => {
      const token = await bothThroughGateway.token();
      const v = await droppedCall(bothThroughGateway, token, [{ status: 422, body: { error: 'barred' } }], [{ status: 422, body: { error: 'barred' } }]);
      const r = await record(bothThroughGateway, token, v.id);
      assert.deepEqual(
        { status: r.status, failureReason: r.failureReason, channel: r.delivery.channel },
        { status: 'FAILED', failureReason: 'UNDELIVERABLE', channel: 'SMS' },
      );
      assert.deepEqual(gatewayRequests(v.id).map((b) => b.channel), ['call', 'sms'], 'one call, one SMS, and no loop back to calls');
      assert.deepEqual(await eventKinds(bothThroughGateway, v.id), ['action.otp.failed']);
    });

    it('never falls an SMS verification back to anything', async () => {
      const token = await bothThroughGateway.token();
      const phoneNumber = nextLocalNumber();
      answers.set(`sms ${e164Of(phoneNumber)}`, [{ status: 422, body: { error: 'barred' } }]);
      const v = await createVerification(bothThroughGateway, token, { phoneNumber });
      const r = await record(bothThroughGateway, token, v.id);
      assert.equal(r.status, 'FAILED');
      assert.deepEqual(gatewayRequests(v.id).map((b) => b.channel), ['sms']);
    });
  });
});
