import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, it } from 'node:test';
import { createVerification, eventually, expectV1Error, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startMetaPeer, type MetaPeer } from '../support/meta-prism.js';

const appSecret = 'meta-app-secret-0123456789abcdef';
const verifyToken = 'verify-token-7f3a9c';
const accessToken = 'EAAGtestaccesstoken0123456789';
const phoneNumberId = '106540352242922';
const publicBase = 'https://otp.example.test';

interface Delivered extends RecordBody {
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

/** A status notification as Meta posts it to the `messages` webhook field. */
function statusNotification(wamid: string, status: string, to: string, errors?: unknown[]): string {
  const value = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: '15550001234', phone_number_id: phoneNumberId },
    statuses: [{ id: wamid, status, timestamp: '1764064800', recipient_id: to, ...(errors && { errors }) }],
  };
  return JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '102290129340398', changes: [{ value, field: 'messages' }] }] });
}

/** Signed as Meta signs: X-Hub-Signature-256 = sha256=<hex HMAC-SHA256 of the raw body with the app secret>. */
const signed = (body: string, secret = appSecret) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * Contract 13, WHATSAPP_PROVIDER=meta,log end to end: sends go to Meta's own OpenAPI description served by Prism,
 * which refuses any request the description (with the overlay in test/support/meta-prism.ts) does not allow;
 * status webhooks are signed as Meta signs them; errors Meta's description does not list are scripted in Meta's
 * error shape, still after Prism validated the request.
 */
forEachDatabase('WhatsApp through Meta\'s Cloud API', (kind) => {
  let meta: MetaPeer;
  let h: Harness;
  before(async () => {
    meta = await startMetaPeer();
    h = await createHarness(kind, {
      env: {
        WHATSAPP_PROVIDER: 'meta,log',
        META_ACCESS_TOKEN: accessToken,
        META_PHONE_NUMBER_ID: phoneNumberId,
        META_APP_SECRET: appSecret,
        META_WEBHOOK_VERIFY_TOKEN: verifyToken,
        META_BASE_URL: meta.url,
        WHATSAPP_TEMPLATE: 'otp_code',
        PUBLIC_BASE_URL: publicBase,
        SEND_RETRY_DELAYS: '2,10',
      },
    });
  });
  after(async () => {
    await h.close();
    await meta.stop();
  });

  const record = async (token: string, id: string): Promise<Delivered> => {
    const res = await h.call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Delivered }).data;
  };
  const sentTo = (v: RecordBody) => meta.requests.filter((r) => r.path.endsWith('/messages') && r.body.includes(`"to":"${v.phoneNumber.slice(1)}"`));
  const wamidOf = async (id: string): Promise<string> => {
    const row = await h.services.db.db.selectFrom('verifications').select('delivery_message_id').where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(row.delivery_message_id);
    return row.delivery_message_id;
  };
  const notify = (body: string, headers: Record<string, string>) =>
    h.app.inject({ method: 'POST', url: '/callbacks/meta', headers: { 'content-type': 'application/json', ...headers }, payload: body });
  /** Sent through meta and recorded SENT. */
  const sentThroughMeta = async (token: string, body: Record<string, unknown> = {}) => {
    const v = await createVerification(h, token, { type: 'WHATSAPP', ...body });
    await h.services.sendWorker.idle();
    const r = await record(token, v.id);
    assert.deepEqual([r.delivery.provider, r.delivery.status, r.delivery.channel], ['meta', 'SENT', 'WHATSAPP'], meta.output().slice(-2000));
    return v;
  };

  it('sends the authentication template with its copy-code button as the contract shows, and Prism finds it valid', async () => {
    const token = await h.token();
    const v = await sentThroughMeta(token);
    const [request] = sentTo(v);
    assert.ok(request);
    assert.equal(request.prismStatus, 200);
    assert.equal(request.path, `/v23.0/${phoneNumberId}/messages`);
    assert.equal(request.headers.authorization, `Bearer ${accessToken}`);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request.body), {
      messaging_product: 'whatsapp',
      to: v.phoneNumber.slice(1),
      type: 'template',
      template: {
        name: 'otp_code',
        language: { code: 'en_US' },
        components: [
          { type: 'body', parameters: [{ type: 'text', text: v.otp }] },
          { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: v.otp }] },
        ],
      },
    });
    assert.match(await wamidOf(v.id), /^wamid\./);
  });

  it('a signed delivered status marks it DELIVERED; a repeat and a read change nothing more', async () => {
    const token = await h.token();
    const v = await sentThroughMeta(token);
    const body = statusNotification(await wamidOf(v.id), 'delivered', v.phoneNumber.slice(1));
    for (const payload of [body, body, statusNotification(await wamidOf(v.id), 'read', v.phoneNumber.slice(1))]) {
      const res = await notify(payload, { 'x-hub-signature-256': signed(payload) });
      assert.equal(res.statusCode, 200, res.body);
    }
    const r = await record(token, v.id);
    assert.deepEqual([r.delivery.provider, r.delivery.status, r.delivery.sends], ['meta', 'DELIVERED', 1]);
  });

  it('a notification with a bad, missing or other-key signature is 403 CALLBACK_FORBIDDEN and changes nothing', async () => {
    const token = await h.token();
    const v = await sentThroughMeta(token);
    const body = statusNotification(await wamidOf(v.id), 'delivered', v.phoneNumber.slice(1));
    for (const headers of [{} as Record<string, string>, { 'x-hub-signature-256': signed(body, 'another-secret') }, { 'x-hub-signature-256': signed(`${body} `) }, { 'x-hub-signature-256': 'sha256=zz' }]) {
      expectV1Error(await notify(body, headers), 403, 'CALLBACK_FORBIDDEN');
    }
    // The signature of another body over this one (a body changed in transit).
    const other = statusNotification(await wamidOf(v.id), 'failed', v.phoneNumber.slice(1));
    expectV1Error(await notify(other, { 'x-hub-signature-256': signed(body) }), 403, 'CALLBACK_FORBIDDEN');
    const r = await record(token, v.id);
    assert.deepEqual([r.delivery.provider, r.delivery.status], ['meta', 'SENT']);
  });

  it('answers the subscription handshake with the challenge as plain text for the right token, 403 otherwise', async () => {
    const ok = await h.app.inject({ method: 'GET', url: `/callbacks/meta?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1158201444` });
    assert.equal(ok.statusCode, 200);
    assert.match(String(ok.headers['content-type']), /^text\/plain/);
    assert.equal(ok.body, '1158201444');
    for (const query of ['hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1158201444', 'hub.mode=subscribe&hub.challenge=1158201444', '']) {
      expectV1Error(await h.app.inject({ method: 'GET', url: `/callbacks/meta?${query}` }), 403, 'CALLBACK_FORBIDDEN');
    }
  });

  it('a failed status fails over to the next WhatsApp provider', async () => {
    const token = await h.token();
    const v = await sentThroughMeta(token);
    const body = statusNotification(await wamidOf(v.id), 'failed', v.phoneNumber.slice(1), [{ code: 131026, title: 'Message undeliverable' }]);
    assert.equal((await notify(body, { 'x-hub-signature-256': signed(body) })).statusCode, 200);
    await h.services.sendWorker.idle();
    await eventually(async () => (await record(token, v.id)).delivery.provider === 'log');
    const r = await record(token, v.id);
    assert.deepEqual([r.status, r.delivery.status, r.delivery.channel], ['PENDING', 'SENT', 'WHATSAPP']);
    assert.equal((await h.services.inbox.latest(5, v.phoneNumber)).filter((m) => m.channel === 'whatsapp').length, 1);
  });

  it('a permanent error code (131026 undeliverable) fails over at once', async () => {
    const token = await h.token();
    const phoneNumber = '+2348031230001';
    meta.script(phoneNumber.slice(1), [{ status: 400, code: 131026 }]);
    const v = await createVerification(h, token, { type: 'WHATSAPP', phoneNumber });
    await h.services.sendWorker.idle();
    await eventually(async () => (await record(token, v.id)).delivery.provider === 'log');
    assert.equal(sentTo(v).length, 1);
    assert.equal(sentTo(v)[0]?.prismStatus, 200, 'the request itself was valid');
  });

  it('a transient error code (130429 throttled) is retried through meta after SEND_RETRY_DELAYS', async () => {
    const token = await h.token();
    const phoneNumber = '+2348031230002';
    meta.script(phoneNumber.slice(1), [{ status: 400, code: 130429 }]);
    const v = await createVerification(h, token, { type: 'WHATSAPP', phoneNumber });
    await h.services.sendWorker.idle();
    let r = await record(token, v.id);
    assert.equal(r.delivery.status, 'QUEUED', 'waiting for its retry, not failed over');
    assert.equal(sentTo(v).length, 1);
    h.clock.advance(2_000);
    await h.services.sendWorker.runOnce();
    await h.services.sendWorker.idle();
    r = await record(token, v.id);
    assert.deepEqual([r.delivery.provider, r.delivery.status], ['meta', 'SENT']);
    assert.equal(sentTo(v).length, 2);
  });

  it('a status that comes before its send is answered is kept and applies once the acceptance commits', async () => {
    const token = await h.token();
    const phoneNumber = '+2348031230004';
    const answers: number[] = [];
    meta.beforeAnswer = async (to, wamid) => {
      if (to !== phoneNumber.slice(1)) return;
      const body = statusNotification(wamid, 'delivered', to);
      answers.push((await notify(body, { 'x-hub-signature-256': signed(body) })).statusCode);
    };
    try {
      const v = await createVerification(h, token, { type: 'WHATSAPP', phoneNumber });
      await h.services.sendWorker.idle();
      assert.deepEqual(answers, [200], 'the status was posted, and answered, before the send');
      await eventually(async () => (await record(token, v.id)).delivery.status === 'DELIVERED');
      assert.equal((await record(token, v.id)).delivery.provider, 'meta');
    } finally {
      meta.beforeAnswer = null;
    }
  });

  it('a template missing in the verification\'s language (132001) is sent once more in en_US', async () => {
    const token = await h.token();
    const phoneNumber = '+2348031230003';
    meta.script(phoneNumber.slice(1), [{ status: 404, code: 132001 }]);
    const v = await sentThroughMeta(token, { phoneNumber, locale: 'pt-BR' });
    const languages = sentTo(v).map((r) => (JSON.parse(r.body) as { template: { language: { code: string } } }).template.language.code);
    assert.deepEqual(languages, ['pt_BR', 'en_US']);
  });
});
