import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createVerification, e164Of, eventKinds, expectV1Error, nextLocalNumber, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { gatewayReceipt } from '../support/gateway.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

type Answer = { status: number; body?: unknown };

interface Attempt {
  channel: string;
  provider: string;
  status: string;
  at: string;
}

interface Stepped extends RecordBody {
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
  fallback: string[];
  deliveries: Attempt[];
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Contract 13, the workflow across channels, with the channels there are today: a DROPPED_CALL whose later step is
 * SEND_SMS. Calls go through a real provider module (`http`, the operator's gateway) against a local gateway that
 * answers as scripted (it is the provider's documented peer: test/providers/http-gateway.test.ts checks every
 * field); SMS goes through `log` (whose messages the test reads back), or through the same gateway when a step must
 * fail too. The test clock drives the time-driven steps; the workers' step task is run by hand, as the harness runs
 * no periodic task.
 */
forEachDatabase('the fallback workflow', (kind) => {
  let gateway: Receiver;
  /** Scripted answers by channel and destination number; unscripted sends are accepted. */
  const answers = new Map<string, Answer[]>();
  const answer = (req: { body: string }, res: http.ServerResponse) => {
    const { verificationId, to, channel } = JSON.parse(req.body) as { verificationId: string; to: string; channel: string };
    const next = answers.get(`${channel} ${to}`)?.shift() ?? { status: 200, body: { messageId: `gw-${channel}-${verificationId}-${Math.random()}` } };
    res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body === undefined ? '' : JSON.stringify(next.body));
  };
  let h: Harness;
  let bothThroughGateway: Harness;
  const after45 = 45;
  before(async () => {
    gateway = await startReceiver((req, res) => answer(req, res));
    const env = (extra: Record<string, string>) => ({
      CALL_PROVIDER: 'http',
      SMS_PROVIDER: 'log',
      HTTP_GATEWAY_URL: gateway.url,
      HTTP_GATEWAY_SECRET: secret,
      PUBLIC_BASE_URL: 'https://otp.example.test',
      SEND_RETRY_DELAYS: '2',
      FALLBACK_AFTER_SECONDS: String(after45),
      ...extra,
    });
    h = await createHarness(kind, { env: env({}) });
    bothThroughGateway = await createHarness(kind, { env: env({ SMS_PROVIDER: 'http' }) });
  });
  after(async () => {
    await h.close();
    await bothThroughGateway.close();
    await gateway.close();
  });

  const record = async (harness: Harness, token: string, id: string): Promise<Stepped> => {
    await harness.services.sendWorker.idle();
    const res = await harness.call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Stepped }).data;
  };
  /** A DROPPED_CALL (SEND_SMS after it) to a fresh number whose call and SMS the gateway answers as scripted. */
  const callThenSms = async (harness: Harness, token: string, calls: Answer[] = [], sms: Answer[] = [], body: Record<string, unknown> = {}) => {
    const phoneNumber = nextLocalNumber();
    answers.set(`call ${e164Of(phoneNumber)}`, [...calls]);
    answers.set(`sms ${e164Of(phoneNumber)}`, [...sms]);
    return (await createVerification(harness, token, { phoneNumber, type: 'DROPPED_CALL', fallback: ['SEND_SMS'], ...body })) as Stepped;
  };
  const gatewayRequests = (verificationId: string) =>
    gateway.requests.map((r) => JSON.parse(r.body) as Record<string, string>).filter((b) => b.verificationId === verificationId);
  const smsOf = async (harness: Harness, id: string) => (await harness.services.messages.forVerification(id)).filter((m) => m.channel === 'sms');
  /** The clock moves on, and the workers' step task runs once (as it does every 200 ms). */
  const stepsAfter = async (harness: Harness, seconds: number) => {
    harness.clock.advance(seconds * 1000);
    await harness.services.deliveries.takeDueSteps();
    await harness.services.sendWorker.idle();
  };
  const shape = (attempts: Attempt[]) => attempts.map((a) => `${a.channel} ${a.provider} ${a.status}`);

  describe('happy', () => {
    it('reads the workflow on the record: fallback still to come, no delivery attempted before the first send', async () => {
      const token = await h.token();
      const v = await callThenSms(h, token);
      assert.equal(v.type, 'DROPPED_CALL');
      assert.deepEqual(v.fallback, ['SEND_SMS']);
      assert.deepEqual(v.deliveries, []);
      const plain = (await createVerification(h, token, {})) as Stepped;
      assert.deepEqual(plain.fallback, [], 'fallback reads [] when none was asked');
    });

    it('sends the same code by SMS at once when every call provider refuses the call (failure-driven)', async () => {
      const token = await h.token();
      const v = await callThenSms(h, token, [{ status: 422, body: { error: 'number cannot take calls' } }]);
      const r = await record(h, token, v.id);
      assert.equal(r.type, 'DROPPED_CALL', 'type keeps the create\'s word');
      assert.equal(r.status, 'PENDING');
      assert.deepEqual(r.fallback, []);
      assert.deepEqual(
        { channel: r.delivery.channel, provider: r.delivery.provider, status: r.delivery.status, sends: r.delivery.sends },
        { channel: 'SMS', provider: 'log', status: 'SENT', sends: 1 },
      );
      assert.deepEqual(shape(r.deliveries), ['CALL http FAILED', 'SMS log SENT']);
      assert.match(await metricsText(h), /otp_fallback_steps_total\{channel="sms",reason="failure"\} [1-9]/);
      assert.ok(r.deliveries.every((a) => !Number.isNaN(Date.parse(a.at))));
      const [sms, ...more] = await smsOf(h, v.id);
      assert.equal(more.length, 0);
      assert.ok(sms?.body.includes(v.otp), 'the SMS carries the call\'s caller-id code');
      const verified = await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp });
      assert.equal(verified.statusCode, 200, verified.body);
    });

    it('sends the same code by SMS once FALLBACK_AFTER_SECONDS pass after the call without a verify; a receipt and a resend do not stop the clock', async () => {
      const token = await h.token();
      const v = await callThenSms(h, token);
      let r = await record(h, token, v.id);
      assert.deepEqual(shape(r.deliveries), ['CALL http SENT']);
      const [call] = gatewayRequests(v.id);
      assert.ok(call);
      // The phone rang: the call is delivered, but not verified, so the clock runs on.
      const receipt = await gatewayReceipt(h, { messageId: r.deliveries.length > 0 ? await messageIdOf(h, v.id) : '', status: 'DELIVERED' }, secret);
      assert.equal(receipt.statusCode, 200, receipt.body);
      await stepsAfter(h, 31);
      const resent = await h.call('POST', `/v1/otp/${v.id}/resend`, token);
      assert.equal(resent.statusCode, 200, resent.body);
      await h.services.sendWorker.idle();
      assert.equal(gatewayRequests(v.id).length, 2, 'the resend went through the current step\'s channel, the call');
      await stepsAfter(h, after45 - 31 - 1);
      assert.deepEqual(await smsOf(h, v.id), [], 'nothing before the step\'s time');
      await stepsAfter(h, 1);
      r = await record(h, token, v.id);
      assert.deepEqual(r.fallback, []);
      assert.equal(r.delivery.channel, 'SMS');
      assert.equal(r.delivery.sends, 3, 'the call, its resend and the step');
      assert.deepEqual(shape(r.deliveries), ['CALL http DELIVERED', 'CALL http SENT', 'SMS log SENT']);
      assert.match(await metricsText(h), /otp_fallback_steps_total\{channel="sms",reason="time"\} [1-9]/);
      assert.match(await metricsText(h), /otp_receipts_total\{channel="call",provider="http",status="DELIVERED"\} [1-9]/);
      const sms = await smsOf(h, v.id);
      assert.equal(sms.length, 1);
      assert.ok(sms[0]?.body.includes(v.otp), 'the same code');
      // No step is left: nothing more, however long it waits.
      await stepsAfter(h, after45 * 2);
      assert.equal((await smsOf(h, v.id)).length, 1);
      assert.equal(gatewayRequests(v.id).length, 2);
    });

    it('resends through the current step\'s channel after a step', async () => {
      const token = await h.token();
      const v = await callThenSms(h, token, [{ status: 422, body: { error: 'barred' } }]);
      assert.equal((await record(h, token, v.id)).delivery.channel, 'SMS');
      h.clock.advance(31_000);
      const resent = await h.call('POST', `/v1/otp/${v.id}/resend`, token);
      assert.equal(resent.statusCode, 200, resent.body);
      const r = await record(h, token, v.id);
      assert.equal(r.delivery.channel, 'SMS');
      assert.equal((await smsOf(h, v.id)).length, 2);
      assert.equal(gatewayRequests(v.id).length, 1, 'no second call');
    });

    it('copies the client\'s default fallback and its own FALLBACK_AFTER_SECONDS onto a create that names none', async () => {
      const client = await h.client();
      const token = await h.token(undefined, client);
      const edited = await h.services.clients.editSettings(client.clientId, (s) => ({ ...s, fallback: ['SEND_SMS'], fallbackAfterSeconds: 5 }));
      assert.equal(edited?.kind, 'saved');
      const phoneNumber = nextLocalNumber();
      const v = (await createVerification(h, token, { phoneNumber, type: 'DROPPED_CALL' })) as Stepped;
      assert.deepEqual(v.fallback, ['SEND_SMS']);
      await record(h, token, v.id);
      await stepsAfter(h, 5);
      assert.equal((await smsOf(h, v.id)).length, 1, 'the step after the client\'s 5 s');
      // The create's own type is left out of the default; an explicit [] asks for no step at all.
      assert.deepEqual(((await createVerification(h, token, {})) as Stepped).fallback, []);
      assert.deepEqual(((await createVerification(h, token, { type: 'DROPPED_CALL', fallback: [] })) as Stepped).fallback, []);
    });
  });

  describe('error', () => {
    it('a verify before the time sends nothing more', async () => {
      const token = await h.token();
      const v = await callThenSms(h, token);
      await record(h, token, v.id);
      const verified = await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp });
      assert.equal(verified.statusCode, 200, verified.body);
      await stepsAfter(h, after45 * 2);
      assert.deepEqual(await smsOf(h, v.id), []);
      assert.equal(gatewayRequests(v.id).length, 1);
      assert.deepEqual((await record(h, token, v.id)).fallback, ['SEND_SMS'], 'the step never came');
    });

    it('cancel stops the clock', async () => {
      const token = await h.token();
      const v = await callThenSms(h, token);
      await record(h, token, v.id);
      const canceled = await h.call('POST', `/v1/otp/${v.id}/cancel`, token);
      assert.equal(canceled.statusCode, 200, canceled.body);
      await stepsAfter(h, after45 * 2);
      assert.deepEqual(await smsOf(h, v.id), []);
    });

    it('is FAILED, UNDELIVERABLE, once, only when the last step failed too', async () => {
      const token = await bothThroughGateway.token();
      const v = await callThenSms(bothThroughGateway, token, [{ status: 422, body: { error: 'barred' } }], [{ status: 422, body: { error: 'barred' } }]);
      const r = await record(bothThroughGateway, token, v.id);
      assert.deepEqual({ status: r.status, failureReason: r.failureReason }, { status: 'FAILED', failureReason: 'UNDELIVERABLE' });
      assert.deepEqual(shape(r.deliveries), ['CALL http FAILED', 'SMS http FAILED']);
      assert.deepEqual(gatewayRequests(v.id).map((b) => b.channel), ['call', 'sms']);
      const sms = gatewayRequests(v.id)[1];
      assert.ok(sms?.text?.includes(v.otp), 'the step carried the same code');
      assert.deepEqual(await eventKinds(bothThroughGateway, v.id), ['action.otp.failed']);
    });

    it('refuses a fallback the registry does not offer as a step, or that repeats, with 400 VALIDATION_ERROR naming fallback', async () => {
      const token = await h.token();
      for (const body of [
        { type: 'SEND_SMS', fallback: ['DROPPED_CALL'] },
        { type: 'SEND_SMS', fallback: ['SEND_SMS'] },
        { type: 'DROPPED_CALL', fallback: ['SEND_SMS', 'SEND_SMS'] },
        { type: 'DROPPED_CALL', fallback: ['SEND_SMS', 'SEND_SMS', 'SEND_SMS'] },
        { type: 'DROPPED_CALL', fallback: ['CARRIER_PIGEON'] },
        { type: 'DROPPED_CALL', fallback: 'SEND_SMS' },
        { type: 'DROPPED_CALL', fallback: [7] },
      ]) {
        const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), ...body });
        const error = expectV1Error(res, 400, 'VALIDATION_ERROR');
        assert.ok(JSON.stringify(error.error.details).includes('fallback'), `${JSON.stringify(body)}: ${res.body}`);
      }
    });
  });

  async function metricsText(harness: Harness): Promise<string> {
    return (await harness.services.metrics.render()).body;
  }

  /** The gateway's id of a verification's latest accepted send, as kept for its receipts. */
  async function messageIdOf(harness: Harness, verificationId: string): Promise<string> {
    const row = await harness.services.db.db
      .selectFrom('provider_messages')
      .select('message_id')
      .where('verification_id', '=', verificationId)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    return row.message_id;
  }
});
