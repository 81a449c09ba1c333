import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import { createVerification, expectV1Error, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, waitFor, type Received, type Receiver } from '../webhooks/helpers.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const publicBase = 'https://otp.example.test';
const callbackUrl = `${publicBase}/callbacks/twilio`;

interface Delivered extends RecordBody {
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number; updatedAt: string };
}

/**
 * Contract 3.4 and 8 for DROPPED_CALL through Twilio, end to end: the HTTP API, the send worker, the `twilio`
 * provider against a local server playing Twilio's REST API, and status callbacks signed as Twilio signs them
 * (twilio-node's helper) posted to /callbacks/twilio. The same instance carries SMS.
 */
forEachDatabase('dropped calls through twilio', (kind) => {
  let twilioApi: Receiver;
  /** Answers to Calls.json by destination number, when scripted; any other create is accepted with a fresh CallSid. */
  const refusals = new Map<string, { status: number; body: object }>();
  /** The sid answered to each destination's latest create (CallSid or MessageSid). */
  const sids = new Map<string, string>();
  const answer = (req: Received, res: http.ServerResponse): void => {
    const form = new URLSearchParams(req.body);
    const reply = (status: number, body: object): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url.endsWith('/Calls.json')) {
      const refusal = refusals.get(form.get('To') ?? '');
      if (refusal) return reply(refusal.status, refusal.body);
      return reply(201, { sid: answered(form, 'CA'), status: 'queued' });
    }
    if (req.url.endsWith('/Messages.json')) return reply(201, { sid: answered(form, 'SM'), status: 'queued' });
    const hangUp = /\/Calls\/(CA[0-9a-f]{32})\.json$/.exec(req.url);
    if (hangUp) return reply(200, { sid: hangUp[1], status: form.get('Status') });
    return reply(404, { code: 20404 });
  };
  const answered = (form: URLSearchParams, prefix: string): string => {
    const sid = `${prefix}${randomBytes(16).toString('hex')}`;
    sids.set(form.get('To') ?? '', sid);
    return sid;
  };
  let failover: Harness;
  let single: Harness;
  before(async () => {
    twilioApi = await startReceiver(answer);
    const env = (calls: string) => ({
      SMS_PROVIDER: 'twilio',
      CALL_PROVIDER: calls,
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: authToken,
      TWILIO_BASE_URL: `http://127.0.0.1:${twilioApi.port}`,
      PUBLIC_BASE_URL: publicBase,
      CALLER_ID_RANGES: '+2349010000000-+2349010009999',
    });
    failover = await createHarness(kind, { env: env('twilio,log') });
    single = await createHarness(kind, { env: env('twilio') });
  });
  after(async () => {
    await failover?.close();
    await single?.close();
    await twilioApi?.close();
  });

  const record = async (h: Harness, token: string, id: string): Promise<Delivered> => {
    const res = await h.call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Delivered }).data;
  };
  /** The Calls.json create Twilio got for this number. */
  const placed = (to: string): URLSearchParams => {
    const request = twilioApi.requests.find((r) => r.url.endsWith('/Calls.json') && new URLSearchParams(r.body).get('To') === to);
    assert.ok(request, `no call placed to ${to}`);
    return new URLSearchParams(request.body);
  };
  const hangUpsOf = (callSid: string): URLSearchParams[] =>
    twilioApi.requests.filter((r) => r.url.endsWith(`/Calls/${callSid}.json`)).map((r) => new URLSearchParams(r.body));
  /** A status callback as Twilio posts it. */
  const callback = (h: Harness, form: Record<string, string>, token = authToken) =>
    h.app.inject({
      method: 'POST',
      url: '/callbacks/twilio',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': getExpectedTwilioSignature(token, callbackUrl, form) },
      payload: new URLSearchParams(form).toString(),
    });
  const progress = (callSid: string, callStatus: string, extra: Record<string, string> = {}) => ({
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: callSid,
    CallStatus: callStatus,
    CallbackSource: 'call-progress-events',
    Direction: 'outbound-api',
    ...extra,
  });
  /** Creates a DROPPED_CALL and waits until its call was placed; returns it and the CallSid. */
  const droppedCall = async (h: Harness, token: string): Promise<{ v: RecordBody; callSid: string; form: URLSearchParams }> => {
    const v = await createVerification(h, token, { type: 'DROPPED_CALL' });
    await h.services.sendWorker.idle();
    const form = placed(v.phoneNumber);
    const callSid = sids.get(v.phoneNumber);
    assert.ok(callSid);
    return { v, callSid, form };
  };

  describe('happy', () => {
    it('places the call from the caller id ending in the code; ringing makes it DELIVERED and cancels the call once, however often it is posted', async () => {
      const token = await failover.token();
      const { v, callSid, form } = await droppedCall(failover, token);
      assert.equal(form.get('From')?.slice(-4), v.otp);
      assert.equal(form.get('From'), `+234${v.pairedNumber.replace(/^0/, '')}`);
      assert.equal(form.get('Twiml'), '<Response><Hangup/></Response>');
      assert.equal(form.get('Timeout'), String(failover.config.CALL_RING_SECONDS));
      assert.equal(form.get('StatusCallback'), callbackUrl);
      assert.deepEqual(form.getAll('StatusCallbackEvent'), ['initiated', 'ringing', 'answered', 'completed']);
      const sent = await record(failover, token, v.id);
      assert.deepEqual(
        { channel: sent.delivery.channel, provider: sent.delivery.provider, status: sent.delivery.status, sends: sent.delivery.sends },
        { channel: 'CALL', provider: 'twilio', status: 'SENT', sends: 1 },
      );

      assert.equal((await callback(failover, progress(callSid, 'initiated'))).statusCode, 200);
      assert.equal((await record(failover, token, v.id)).delivery.status, 'SENT');
      const rang = await callback(failover, progress(callSid, 'ringing'));
      assert.equal(rang.statusCode, 200, rang.body);
      const delivered = await record(failover, token, v.id);
      assert.deepEqual({ status: delivered.status, delivery: delivered.delivery.status }, { status: 'PENDING', delivery: 'DELIVERED' });
      assert.equal((await callback(failover, progress(callSid, 'ringing'))).statusCode, 200);
      const [hangUp] = await waitFor('the hang-up', () => hangUpsOf(callSid).length > 0 && hangUpsOf(callSid));
      assert.equal(hangUp?.get('Status'), 'canceled');
      // What ends the call afterwards (cancelled, or busy when the user declines) changes nothing.
      assert.equal((await callback(failover, progress(callSid, 'canceled'))).statusCode, 200);
      assert.equal((await callback(failover, progress(callSid, 'busy'))).statusCode, 200);
      await failover.services.sendWorker.idle();
      assert.deepEqual(await record(failover, token, v.id), delivered);
      // The second ringing made no second hang-up: it would have been sent at once, like the first.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(hangUpsOf(callSid).length, 1);
      // And the code is the caller id's last digits.
      const verified = await failover.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp });
      assert.equal(verified.statusCode, 200, verified.body);
    });

    it('carries SMS on the same instance: a message goes out through the Messages API and its receipt is read', async () => {
      assert.equal(failover.services.providers.forChannel('sms')[0], failover.services.providers.forChannel('call')[0]);
      const token = await failover.token();
      const v = await createVerification(failover, token);
      await failover.services.sendWorker.idle();
      const request = twilioApi.requests.find((r) => r.url.endsWith('/Messages.json') && new URLSearchParams(r.body).get('To') === v.phoneNumber);
      assert.ok(request);
      assert.ok(new URLSearchParams(request.body).get('Body')?.includes(v.otp));
      const ok = await callback(failover, { MessageSid: sids.get(v.phoneNumber) ?? '', MessageStatus: 'delivered', AccountSid: accountSid });
      assert.equal(ok.statusCode, 200, ok.body);
      const r = await record(failover, token, v.id);
      assert.deepEqual({ channel: r.delivery.channel, provider: r.delivery.provider, status: r.delivery.status }, { channel: 'SMS', provider: 'twilio', status: 'DELIVERED' });
    });
  });

  describe('failover', () => {
    it('a call busy before ringing fails over to the next call provider (log)', async () => {
      const token = await failover.token();
      const { v, callSid } = await droppedCall(failover, token);
      const busy = await callback(failover, progress(callSid, 'busy', { SipResponseCode: '486' }));
      assert.equal(busy.statusCode, 200, busy.body);
      await failover.services.sendWorker.idle();
      const r = await record(failover, token, v.id);
      assert.deepEqual(
        { status: r.status, provider: r.delivery.provider, delivery: r.delivery.status, sends: r.delivery.sends, channel: r.delivery.channel },
        { status: 'PENDING', provider: 'log', delivery: 'SENT', sends: 2, channel: 'CALL' },
      );
      const logged = await failover.services.messages.forVerification(v.id);
      assert.equal(logged.length, 1, 'the log provider took the call');
      assert.equal(hangUpsOf(callSid).length, 0, 'a busy call is not hung up');
    });

    it('a call Twilio refuses (blocked number) goes to the next provider at once', async () => {
      const token = await failover.token();
      const phone = '08039990001';
      refusals.set('+2348039990001', { status: 400, body: { code: 21216, message: 'Call blocked' } });
      const v = await createVerification(failover, token, { type: 'DROPPED_CALL', phoneNumber: phone });
      await failover.services.sendWorker.idle();
      const r = await record(failover, token, v.id);
      assert.deepEqual({ status: r.status, provider: r.delivery.provider, delivery: r.delivery.status }, { status: 'PENDING', provider: 'log', delivery: 'SENT' });
    });
  });

  describe('error', () => {
    it('with twilio alone, a call that failed before ringing turns the verification FAILED, UNDELIVERABLE', async () => {
      const token = await single.token();
      const { v, callSid } = await droppedCall(single, token);
      assert.equal((await callback(single, progress(callSid, 'failed', { SipResponseCode: '404' }))).statusCode, 200);
      const r = await record(single, token, v.id);
      assert.deepEqual(
        { status: r.status, failureReason: r.failureReason, delivery: r.delivery.status, provider: r.delivery.provider },
        { status: 'FAILED', failureReason: 'UNDELIVERABLE', delivery: 'UNDELIVERED', provider: 'twilio' },
      );
    });
  });

  describe('security', () => {
    it('a badly signed ringing callback is 403, changes nothing and hangs nothing up', async () => {
      const token = await single.token();
      const { v, callSid } = await droppedCall(single, token);
      const before = await record(single, token, v.id);
      expectV1Error(await callback(single, progress(callSid, 'ringing'), 'another-auth-token'), 403, 'CALLBACK_FORBIDDEN');
      const unsigned = await single.app.inject({
        method: 'POST',
        url: '/callbacks/twilio',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(progress(callSid, 'busy')).toString(),
      });
      expectV1Error(unsigned, 403, 'CALLBACK_FORBIDDEN');
      const json = await single.app.inject({
        method: 'POST',
        url: '/callbacks/twilio',
        headers: { 'content-type': 'application/json', 'x-twilio-signature': getExpectedTwilioSignature(authToken, callbackUrl, {}) },
        payload: JSON.stringify(progress(callSid, 'busy')),
      });
      expectV1Error(json, 403, 'CALLBACK_FORBIDDEN');
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(await record(single, token, v.id), before);
      assert.equal(hangUpsOf(callSid).length, 0);
    });
  });
});
