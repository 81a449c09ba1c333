import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { after, before, it } from 'node:test';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import { createVerification, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Received, type Receiver } from '../webhooks/helpers.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const publicBase = 'https://otp.example.test';
const voiceCallbackUrl = `${publicBase}/callbacks/twilio/voice`;
const caller = '+2349010000555';

interface Delivered extends RecordBody {
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

/**
 * Contract 13 for VOICE_CALL through Twilio, end to end: the HTTP API, the send worker, the `twilio` provider
 * against a local server playing Twilio's REST API (the request itself is checked against Twilio's description in
 * test/providers/twilio-spoken-code.test.ts), and progress callbacks signed as Twilio signs them posted to
 * /callbacks/twilio/voice: answered is DELIVERED, unanswered fails over, then fails.
 */
forEachDatabase('voice calls through twilio', (kind) => {
  let twilioApi: Receiver;
  const sids = new Map<string, string>();
  const answer = (req: Received, res: http.ServerResponse): void => {
    const form = new URLSearchParams(req.body);
    const sid = `CA${randomBytes(16).toString('hex')}`;
    sids.set(form.get('To') ?? '', sid);
    res.writeHead(req.url.endsWith('/Calls.json') ? 201 : 404, { 'content-type': 'application/json' }).end(JSON.stringify({ sid, status: 'queued' }));
  };
  let failover: Harness;
  let single: Harness;
  before(async () => {
    twilioApi = await startReceiver(answer);
    const env = (voice: string) => ({
      SMS_PROVIDER: 'twilio',
      VOICE_PROVIDER: voice,
      VOICE_CALLER_NUMBER: caller,
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: authToken,
      TWILIO_BASE_URL: `http://127.0.0.1:${twilioApi.port}`,
      PUBLIC_BASE_URL: publicBase,
    });
    failover = await createHarness(kind, { env: env('twilio,log') });
    single = await createHarness(kind, { env: env('twilio') });
  });
  after(async () => {
    await failover?.close();
    await single?.close();
    await twilioApi?.close();
  });

  const record = async (h: Harness, token: string, id: string): Promise<Delivered> => (await h.call('GET', `/v1/otp/${id}`, token)).json<{ data: Delivered }>().data;
  const callback = (h: Harness, callSid: string, callStatus: string) => {
    const form = { AccountSid: accountSid, ApiVersion: '2010-04-01', CallSid: callSid, CallStatus: callStatus, Direction: 'outbound-api' };
    return h.app.inject({
      method: 'POST',
      url: '/callbacks/twilio/voice',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': getExpectedTwilioSignature(authToken, voiceCallbackUrl, form) },
      payload: new URLSearchParams(form).toString(),
    });
  };
  const voiceCall = async (h: Harness, token: string): Promise<{ v: RecordBody; callSid: string; form: URLSearchParams }> => {
    const v = await createVerification(h, token, { type: 'VOICE_CALL' });
    await h.services.sendWorker.idle();
    const request = twilioApi.requests.find((r) => r.url.endsWith('/Calls.json') && new URLSearchParams(r.body).get('To') === v.phoneNumber);
    assert.ok(request, 'no call placed');
    const callSid = sids.get(v.phoneNumber);
    assert.ok(callSid);
    return { v, callSid, form: new URLSearchParams(request.body) };
  };

  it('places the call from VOICE_CALLER_NUMBER reading the code; ringing is SENT, answered is DELIVERED', async () => {
    const token = await failover.token();
    const { v, callSid, form } = await voiceCall(failover, token);
    assert.equal(form.get('From'), caller);
    assert.equal(form.get('Timeout'), String(failover.config.CALL_RING_SECONDS));
    assert.equal(form.get('StatusCallback'), voiceCallbackUrl);
    assert.ok(form.get('Twiml')?.includes(`Your code is ${[...v.otp].join(', ')}.`));
    assert.equal((await callback(failover, callSid, 'ringing')).statusCode, 200);
    assert.equal((await record(failover, token, v.id)).delivery.status, 'SENT');
    const answered = await callback(failover, callSid, 'in-progress');
    assert.equal(answered.statusCode, 200, answered.body);
    const r = await record(failover, token, v.id);
    assert.deepEqual({ channel: r.delivery.channel, provider: r.delivery.provider, status: r.delivery.status }, { channel: 'VOICE', provider: 'twilio', status: 'DELIVERED' });
    assert.ok(!twilioApi.requests.some((q) => q.url.endsWith(`/Calls/${callSid}.json`)), 'a voice call is never hung up by us');
  });

  it('a call nobody answered fails over to the next voice provider (log)', async () => {
    const token = await failover.token();
    const { v, callSid } = await voiceCall(failover, token);
    assert.equal((await callback(failover, callSid, 'no-answer')).statusCode, 200);
    await failover.services.sendWorker.idle();
    const r = await record(failover, token, v.id);
    assert.deepEqual({ status: r.status, provider: r.delivery.provider, sends: r.delivery.sends, channel: r.delivery.channel }, { status: 'PENDING', provider: 'log', sends: 2, channel: 'VOICE' });
    const [m] = await failover.services.messages.forVerification(v.id);
    assert.equal(m?.channel, 'voice');
  });

  it('a busy call with no provider left is FAILED UNDELIVERABLE', async () => {
    const token = await single.token();
    const { v, callSid } = await voiceCall(single, token);
    assert.equal((await callback(single, callSid, 'busy')).statusCode, 200);
    await single.services.sendWorker.idle();
    const r = await record(single, token, v.id);
    assert.deepEqual({ status: r.status, failureReason: r.failureReason, delivery: r.delivery.status }, { status: 'FAILED', failureReason: 'UNDELIVERABLE', delivery: 'UNDELIVERED' });
  });
});
