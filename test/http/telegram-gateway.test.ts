import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatMessage } from '../../src/cli/messages.js';
import { loadConfig } from '../../src/config.js';
import { gatewaySignature } from '../../src/providers/telegram/gateway-report.js';
import { createVerification, e164Of, eventually, expectV1Error, nextLocalNumber, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startGatewayPeer, type GatewayPeer } from '../support/telegram-gateway-peer.js';

const token = 'AAGtelegramgatewaytoken0123456789';
const publicBase = 'https://otp.example.test';

interface Delivered extends RecordBody {
  delivery: { channel: string; provider: string | null; status: string };
  deliveries: { channel: string; provider: string; status: string; cost: string | null }[];
}

/**
 * Contract 19, TELEGRAM_PROVIDER=telegram end to end. No Telegram peer can run here: the Gateway is a local
 * receiver (test/support/telegram-gateway-peer.ts) that holds each request to the Gateway's documentation and
 * answers as its examples do; reports come back signed as the Gateway signs them, on the test clock.
 */
forEachDatabase('TELEGRAM through the Telegram Gateway', (kind) => {
  let gateway: GatewayPeer;
  let h: Harness;
  before(async () => {
    gateway = await startGatewayPeer({ token, callbackUrl: `${publicBase}/callbacks/telegram`, cost: 0.01 });
    h = await createHarness(kind, {
      env: { TELEGRAM_PROVIDER: 'telegram', SMS_PROVIDER: 'log', TELEGRAM_GATEWAY_TOKEN: token, TELEGRAM_BASE_URL: gateway.url, PUBLIC_BASE_URL: publicBase },
    });
  });
  after(async () => {
    await h.close();
    await gateway.stop();
  });

  const record = async (bearer: string, id: string): Promise<Delivered> => {
    const res = await h.call('GET', `/v1/otp/${id}`, bearer);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Delivered }).data;
  };
  const requestIdOf = (phone: string): string => {
    const sent = gateway.requests.find((r) => r.path === '/sendVerificationMessage' && r.params.phone_number === phone);
    assert.ok(sent, 'no sendVerificationMessage for the number');
    return String(sent.params.request_id);
  };
  /** A delivery report as the Gateway posts it: a RequestStatus, signed at `at` (Unix seconds). */
  const report = (requestId: string, phone: string, status: string, options: { at?: number; key?: string; refunded?: boolean } = {}) => {
    const at = String(options.at ?? Math.floor(h.clock.now().getTime() / 1000));
    const body = JSON.stringify({
      request_id: requestId,
      phone_number: phone,
      request_cost: 0.01,
      ...(options.refunded !== undefined && { is_refunded: options.refunded }),
      delivery_status: { status, updated_at: Number(at) },
    });
    return h.app.inject({
      method: 'POST',
      url: '/callbacks/telegram',
      headers: { 'content-type': 'application/json', 'x-request-timestamp': at, 'x-request-signature': gatewaySignature(options.key ?? token, at, body) },
      payload: body,
    });
  };

  it('checks the number, sends its own code with the check\'s request_id, and the signed report marks it DELIVERED', async () => {
    const bearer = await h.token();
    const v = await createVerification(h, bearer, { type: 'TELEGRAM' });
    assert.equal(v.type, 'TELEGRAM');
    await h.services.sendWorker.idle();
    const sent = await record(bearer, v.id);
    assert.deepEqual([sent.delivery.channel, sent.delivery.provider, sent.delivery.status], ['TELEGRAM', 'telegram', 'SENT']);
    const calls = gateway.requests.filter((r) => r.params.phone_number === v.phoneNumber);
    assert.deepEqual(calls.map((r) => r.path), ['/checkSendAbility', '/sendVerificationMessage']);
    const [, send] = calls;
    assert.ok(send);
    assert.equal(send.params.code, v.otp);
    // Ten minutes of lifetime, none of it gone on the test clock.
    assert.equal(send.params.ttl, 600);
    // The price the Gateway reported is the attempt's cost.
    assert.deepEqual(sent.deliveries.map((d) => [d.channel, d.provider, d.status, d.cost]), [['TELEGRAM', 'telegram', 'SENT', '0.01']]);
    const answered = await report(requestIdOf(v.phoneNumber), v.phoneNumber, 'delivered');
    assert.equal(answered.statusCode, 200, answered.body);
    assert.equal((await record(bearer, v.id)).delivery.status, 'DELIVERED');
    // Read after delivered changes nothing more.
    assert.equal((await report(requestIdOf(v.phoneNumber), v.phoneNumber, 'read')).statusCode, 200);
    const verified = await h.call('POST', '/v1/otp/verify', bearer, { id: v.id, otp: v.otp });
    assert.equal(verified.statusCode, 200, verified.body);
    // Verified: the message is revoked after the commit, the verify answer not waiting for it.
    await h.services.revoker.idle();
    const revoked = gateway.requests.filter((r) => r.path === '/revokeVerificationMessage');
    assert.deepEqual(revoked.map((r) => r.params), [{ request_id: requestIdOf(v.phoneNumber) }]);
    assert.deepEqual(gateway.problems, []);
  });

  it('a cancelled verification revokes its message', async () => {
    const bearer = await h.token();
    const v = await createVerification(h, bearer, { type: 'TELEGRAM' });
    await h.services.sendWorker.idle();
    const cancelled = await h.call('POST', `/v1/otp/${v.id}/cancel`, bearer);
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    await h.services.revoker.idle();
    const id = requestIdOf(v.phoneNumber);
    assert.equal(gateway.requests.filter((r) => r.path === '/revokeVerificationMessage' && r.params.request_id === id).length, 1);
    assert.deepEqual(gateway.problems, []);
  });

  it('a number without Telegram fails the step at once and the workflow\'s next step sends an SMS through log', async () => {
    const bearer = await h.token();
    const local = nextLocalNumber();
    gateway.withoutTelegram.add(e164Of(local));
    const v = await createVerification(h, bearer, { phoneNumber: local, type: 'TELEGRAM', fallback: ['SEND_SMS'] });
    await eventually(async () => (await h.services.inbox.latest(10, e164Of(local))).length === 1);
    const [sms] = await h.services.inbox.latest(10, e164Of(local));
    assert.equal(sms?.channel, 'sms');
    assert.ok(sms?.text?.includes(String(v.otp)));
    await h.services.sendWorker.idle();
    const r = await record(bearer, v.id);
    assert.equal(r.delivery.channel, 'SMS');
    assert.deepEqual(r.deliveries.map((d) => [d.channel, d.provider, d.status]), [['TELEGRAM', 'telegram', 'FAILED'], ['SMS', 'log', 'SENT']]);
    // Only the check was asked: no message was sent to a number that cannot receive it.
    assert.deepEqual(gateway.requests.filter((q) => q.params.phone_number === e164Of(local)).map((q) => q.path), ['/checkSendAbility']);
    assert.deepEqual(gateway.problems, []);
  });

  it('a send that failed for a while is retried with the ability check it had, not a second one', async () => {
    const bearer = await h.token();
    const local = nextLocalNumber();
    gateway.failNextSend.add(e164Of(local));
    const v = await createVerification(h, bearer, { phoneNumber: local, type: 'TELEGRAM' });
    await h.services.sendWorker.idle();
    assert.equal((await record(bearer, v.id)).delivery.status, 'QUEUED', 'waiting for its retry');
    h.clock.advance(2_000);
    await h.services.sendWorker.runOnce();
    await h.services.sendWorker.idle();
    const r = await record(bearer, v.id);
    assert.deepEqual([r.delivery.provider, r.delivery.status], ['telegram', 'SENT']);
    const calls = gateway.requests.filter((q) => q.params.phone_number === v.phoneNumber);
    assert.deepEqual(calls.map((q) => q.path), ['/checkSendAbility', '/sendVerificationMessage', '/sendVerificationMessage']);
    assert.equal(calls[1]?.params.request_id, calls[2]?.params.request_id);
    assert.deepEqual(r.deliveries.map((d) => d.cost), ['0.01']);
    assert.deepEqual(gateway.problems, []);
  });

  it('a report with a bad, missing or stale signature is 403 and changes nothing', async () => {
    const bearer = await h.token();
    const v = await createVerification(h, bearer, { type: 'TELEGRAM' });
    await h.services.sendWorker.idle();
    const id = requestIdOf(v.phoneNumber);
    expectV1Error(await report(id, v.phoneNumber, 'delivered', { key: 'another-token-0123456789abcdef' }), 403, 'CALLBACK_FORBIDDEN');
    const now = Math.floor(h.clock.now().getTime() / 1000);
    expectV1Error(await report(id, v.phoneNumber, 'delivered', { at: now - 600 }), 403, 'CALLBACK_FORBIDDEN');
    const unsigned = await h.app.inject({ method: 'POST', url: '/callbacks/telegram', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ request_id: id, delivery_status: { status: 'delivered', updated_at: now } }) });
    expectV1Error(unsigned, 403, 'CALLBACK_FORBIDDEN');
    assert.equal((await record(bearer, v.id)).delivery.status, 'SENT');
  });

  it('an expired message is UNDELIVERED and, refunded, costs 0 on its attempt and in the cost ledger', async () => {
    const bearer = await h.token();
    const v = await createVerification(h, bearer, { type: 'TELEGRAM' });
    await h.services.sendWorker.idle();
    const ledger = () => h.services.db.db.selectFrom('send_costs').select('cost').where('verification_id', '=', v.id).execute();
    assert.deepEqual((await ledger()).map((c) => Number(c.cost)), [0.01]);
    const answered = await report(requestIdOf(v.phoneNumber), v.phoneNumber, 'expired', { refunded: true });
    assert.equal(answered.statusCode, 200, answered.body);
    const r = await record(bearer, v.id);
    assert.deepEqual(r.deliveries.map((d) => [d.status, d.cost]), [['UNDELIVERED', '0']]);
    assert.deepEqual((r as unknown as { cost: unknown }).cost, { amount: '0', currency: 'USD', unknownSends: 0 });
    assert.deepEqual((await ledger()).map((c) => Number(c.cost)), [0]);
  });
});

describe('TELEGRAM_PROVIDER', () => {
  it('in development a TELEGRAM code goes through log to the inbox, marked TELEGRAM', async () => {
    const dev = await createHarness('pglite');
    try {
      const bearer = await dev.token();
      const local = nextLocalNumber();
      const v = await createVerification(dev, bearer, { phoneNumber: local, type: 'TELEGRAM' });
      await eventually(async () => (await dev.services.inbox.latest(10, e164Of(local)))[0]?.state?.deliveryStatus === 'SENT');
      const [message] = await dev.services.inbox.latest(10, e164Of(local));
      assert.ok(message);
      assert.equal(message.channel, 'telegram');
      assert.match(formatMessage(message, false), new RegExp(`TELEGRAM to \\+234\\d+ from Telegram: ${String(v.otp)} is your verification code\\.`));
      const fetched = (await dev.call('GET', `/v1/otp/${v.id}`, bearer)).json() as { data: Delivered };
      assert.deepEqual([fetched.data.delivery.channel, fetched.data.delivery.provider], ['TELEGRAM', 'log']);
    } finally {
      await dev.close();
    }
  });


  it('is log when developing with no provider named; telegram needs its token, a base URL and PUBLIC_BASE_URL at start', () => {
    assert.deepEqual(loadConfig({}).providers.telegram.map((p) => p.module.name), ['log']);
    assert.throws(() => loadConfig({ TELEGRAM_PROVIDER: 'telegram', PUBLIC_BASE_URL: publicBase }), /TELEGRAM_GATEWAY_TOKEN: required by the telegram provider/);
    assert.throws(() => loadConfig({ TELEGRAM_PROVIDER: 'telegram', PUBLIC_BASE_URL: publicBase, TELEGRAM_GATEWAY_TOKEN: token, TELEGRAM_BASE_URL: 'ftp://x' }), /TELEGRAM_BASE_URL: must be an http\(s\) URL/);
    assert.throws(() => loadConfig({ TELEGRAM_PROVIDER: 'telegram', TELEGRAM_GATEWAY_TOKEN: token }), /PUBLIC_BASE_URL/);
    const values = loadConfig({ TELEGRAM_PROVIDER: 'telegram', PUBLIC_BASE_URL: publicBase, TELEGRAM_GATEWAY_TOKEN: token }).providers.telegram[0]?.values;
    assert.deepEqual(values?.TELEGRAM_BASE_URL, { origin: 'https://gatewayapi.telegram.org', pathPrefix: '' });
  });
});
