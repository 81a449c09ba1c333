import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import { createVerification, expectV1Error, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startTwilioPrism, type PrismMock } from '../support/prism.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const publicBase = 'https://otp.example.test';

interface Delivered extends RecordBody {
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

/**
 * Contract 13, WHATSAPP_PROVIDER=twilio end to end: the send goes to Twilio's own OpenAPI description served by
 * Prism (it refuses a request the description does not allow), and the status callback is signed as Twilio signs it.
 */
forEachDatabase('WhatsApp through Twilio', (kind) => {
  let prism: PrismMock;
  let h: Harness;
  before(async () => {
    prism = await startTwilioPrism();
    h = await createHarness(kind, {
      env: {
        WHATSAPP_PROVIDER: 'twilio',
        TWILIO_ACCOUNT_SID: accountSid,
        TWILIO_AUTH_TOKEN: authToken,
        TWILIO_BASE_URL: prism.url,
        TWILIO_WHATSAPP_SENDER: '+14155238886',
        TWILIO_WHATSAPP_CONTENT_SID: 'HX0123456789abcdef0123456789abcdef',
        PUBLIC_BASE_URL: publicBase,
      },
    });
  });
  after(async () => {
    await h.close();
    await prism.stop();
  });

  it('goes out through Twilio, and its signed delivered status callback marks it DELIVERED (an unsigned one is 403)', async () => {
    const token = await h.token();
    const v = await createVerification(h, token, { type: 'WHATSAPP' });
    await h.services.sendWorker.idle();
    const record = async (): Promise<Delivered> => ((await h.call('GET', `/v1/otp/${v.id}`, token)).json() as { data: Delivered }).data;
    let r = await record();
    assert.deepEqual([r.delivery.channel, r.delivery.provider, r.delivery.status], ['WHATSAPP', 'twilio', 'SENT'], prism.output().slice(-1500));
    const row = await h.services.db.db.selectFrom('verifications').select('delivery_message_id').where('id', '=', v.id).executeTakeFirstOrThrow();
    const status = { MessageSid: String(row.delivery_message_id), MessageStatus: 'delivered', AccountSid: accountSid, To: `whatsapp:${v.phoneNumber}` };
    const post = (signature: string) =>
      h.app.inject({
        method: 'POST',
        url: '/callbacks/twilio',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
        payload: new URLSearchParams(status).toString(),
      });
    expectV1Error(await post(getExpectedTwilioSignature('another-token', `${publicBase}/callbacks/twilio`, status)), 403, 'CALLBACK_FORBIDDEN');
    assert.equal((await record()).delivery.status, 'SENT');
    const res = await post(getExpectedTwilioSignature(authToken, `${publicBase}/callbacks/twilio`, status));
    assert.equal(res.statusCode, 200, res.body);
    r = await record();
    assert.deepEqual([r.delivery.provider, r.delivery.status], ['twilio', 'DELIVERED']);
  });
});
