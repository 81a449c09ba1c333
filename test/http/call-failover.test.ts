import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { after, before, it } from 'node:test';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import { exactly, sippAddress, sippMissing, startSipp, type SippRun } from '../providers/sipp.js';
import { createVerification, eventually, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Received, type Receiver } from '../webhooks/helpers.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const publicBase = 'https://otp.example.test';

interface Delivered extends RecordBody {
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

/**
 * Contract 8, `CALL_PROVIDER=sip,twilio`: a trunk that answers busy (486, a permanent failure before ringing) hands
 * the call to the next provider at once, from the same caller id. SIPp is the trunk; a local server plays
 * Twilio's Calls API, and the ringing callback is signed as Twilio signs it.
 */
forEachDatabase('dropped calls failing over from a SIP trunk to Twilio', (kind) => {
  const missing = sippMissing();
  let sipp: SippRun;
  let twilioApi: Receiver;
  let h: Harness;
  const callSid = `CA${randomBytes(16).toString('hex')}`;
  before(async () => {
    if (missing) return;
    sipp = await startSipp('final.xml', 'udp', {
      FROM_RE: `^ *<sip:\\+234812000[0-9]{4}@${exactly(sippAddress)}>;tag=[0-9a-f]+ *$`,
      PAI_RE: `^ *<sip:\\+234812000[0-9]{4}@${exactly(sippAddress)}> *$`,
      STATUS: '486',
      PHRASE: 'Busy Here',
    });
    twilioApi = await startReceiver((req: Received, res: http.ServerResponse) => {
      const body = req.url.endsWith('/Calls.json') ? { sid: callSid, status: 'queued' } : { sid: callSid, status: 'canceled' };
      res.writeHead(req.url.endsWith('/Calls.json') ? 201 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    h = await createHarness(kind, {
      env: {
        CALL_PROVIDER: 'sip,twilio',
        SIP_TRUNK_URI: `sip:${sippAddress}:${sipp.port}`,
        SIP_LOCAL_ADDRESS: '127.0.0.1',
        TWILIO_ACCOUNT_SID: accountSid,
        TWILIO_AUTH_TOKEN: authToken,
        TWILIO_BASE_URL: `http://127.0.0.1:${twilioApi.port}`,
        PUBLIC_BASE_URL: publicBase,
        CALLER_ID_RANGES: '+2348120000000-+2348120009999',
      },
    });
    await h.services.providers.start();
  });
  after(async () => {
    if (missing) return;
    await h.close();
    sipp.stop();
    await twilioApi.close();
  });

  it('moves a call the trunk answers busy to Twilio at once, from the same caller id, and records it rang', { skip: missing ?? false }, async () => {
    const token = await h.token();
    const v = await createVerification(h, token, { type: 'DROPPED_CALL' });
    const record = async (): Promise<Delivered> => ((await h.call('GET', `/v1/otp/${v.id}`, token)).json() as { data: Delivered }).data;
    await eventually(async () => (await record()).delivery.provider === 'twilio', 10_000);
    assert.equal(await sipp.exited, 0, `SIPp's scenario (486, ACK) did not pass: ${sipp.errors()}`);
    const trunkCaller = /^From: *<sip:(\+\d+)@/m.exec(sipp.messages())?.[1];
    const create = twilioApi.requests.find((r) => r.url.endsWith('/Calls.json'));
    assert.ok(create, 'the call went to Twilio');
    const form = new URLSearchParams(create.body);
    assert.equal(form.get('To'), v.phoneNumber);
    assert.equal(form.get('From'), trunkCaller, 'the same caller id through both providers');
    assert.equal(form.get('From')?.slice(-4), v.otp);
    let r = await record();
    assert.deepEqual({ status: r.status, channel: r.delivery.channel, delivery: r.delivery.status, sends: r.delivery.sends }, { status: 'PENDING', channel: 'CALL', delivery: 'SENT', sends: 1 });
    const ringing = { CallSid: callSid, CallStatus: 'ringing', AccountSid: accountSid };
    const res = await h.app.inject({
      method: 'POST',
      url: '/callbacks/twilio',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': getExpectedTwilioSignature(authToken, `${publicBase}/callbacks/twilio`, ringing) },
      payload: new URLSearchParams(ringing).toString(),
    });
    assert.equal(res.statusCode, 200, res.body);
    r = await record();
    assert.deepEqual({ provider: r.delivery.provider, delivery: r.delivery.status }, { provider: 'twilio', delivery: 'DELIVERED' });
  });
});
