import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallbackRequest, OutgoingTelegram } from '../../src/channels/provider-port.js';
import { gatewayReportReceipts, gatewaySignature } from '../../src/providers/telegram/gateway-report.js';
import { messageTtl, telegramGateway, telegramSettings } from '../../src/providers/telegram/gateway.js';
import { TestClock } from '../support/clock.js';
import { assertLogsHide, assertModuleDeclares, localServer, recordingContext, replyJson, sendOnce } from './support.js';

/**
 * The telegram provider's own answers and reports, against a local server (no Telegram peer can run here): how
 * each Gateway answer maps to a send result, what the message's ttl is, and what a report comes to.
 */
const token = 'AAGtelegramgatewaytoken0123456789';
const clock = new TestClock();
const message: OutgoingTelegram = {
  channel: 'telegram',
  sendId: 'send-1',
  verificationId: 'ver-1',
  to: '+2348012345678',
  code: '482913',
  expiresAt: new Date(clock.now().getTime() + 600_000),
  text: '482913 is your verification code.',
};

describe('telegram provider', () => {
  const server = localServer();
  const provider = (lines = recordingContext('https://otp.example.test/callbacks/telegram')) =>
    telegramGateway.create({ TELEGRAM_GATEWAY_TOKEN: token, TELEGRAM_BASE_URL: telegramSettings.TELEGRAM_BASE_URL.parse(server.url) }, { ...lines, clock });

  it('declares the telegram channel and HTTP callbacks', () => {
    assertModuleDeclares(telegramGateway, { name: 'telegram', channels: ['telegram'], callbacks: true });
  });

  it('gives the message what is left of the code, within the 30 to 3600 seconds the Gateway takes', () => {
    const now = clock.now();
    assert.equal(messageTtl(new Date(now.getTime() + 600_000), now), 600);
    assert.equal(messageTtl(new Date(now.getTime() + 10_000), now), 30);
    assert.equal(messageTtl(new Date(now.getTime() + 7_200_000), now), 3600);
  });

  it('throttling and server errors may pass; an error the Gateway names does not; the token is never logged', async () => {
    const context = recordingContext('https://otp.example.test/callbacks/telegram');
    server.handler = (_req, res) => replyJson(res, 429, { ok: false, error: 'TOO_MANY_REQUESTS' }, { 'retry-after': '3' });
    assert.deepEqual(await sendOnce(provider(context), message), { kind: 'transient', reason: 'Telegram Gateway: HTTP 429', retryAfterSeconds: 3 });
    server.handler = (_req, res) => replyJson(res, 502, {});
    assert.equal((await sendOnce(provider(context), message)).kind, 'transient');
    server.handler = (_req, res) => replyJson(res, 200, { ok: false, error: `ACCESS_TOKEN_INVALID ${token}` });
    const refused = await sendOnce(provider(context), message);
    assert.equal(refused.kind, 'permanent');
    assert.ok(refused.kind === 'permanent' && !refused.reason.includes(token), 'the token is hidden in the reason');
    server.handler = (_req, res) => replyJson(res, 400, { ok: false, error: 'FLOOD_WAIT_5' });
    assert.equal((await sendOnce(provider(context), message)).kind, 'transient');
    assertLogsHide(context.lines, [token, message.code]);
  });

  it('refuses a code Telegram cannot take and a message of another channel, asking nothing', async () => {
    const before = server.seen.length;
    assert.equal((await sendOnce(provider(), { ...message, code: '123' })).kind, 'permanent');
    assert.equal((await sendOnce(provider(), { ...message, code: '1234567890' })).kind, 'permanent');
    assert.equal(server.seen.length, before);
  });
});

describe('Telegram Gateway reports', () => {
  const now = clock.now();
  const at = String(Math.floor(now.getTime() / 1000));
  const signed = (body: string, method = 'POST'): CallbackRequest => ({
    method,
    url: 'https://otp.example.test/callbacks/telegram',
    headers: { 'content-type': 'application/json', 'x-request-timestamp': at, 'x-request-signature': gatewaySignature(token, at, body) },
    rawBody: Buffer.from(body),
  });

  it('reads a delivery status as a receipt, expired as refunded; a report without one is none', () => {
    const body = (status: string) => JSON.stringify({ request_id: 'r1', phone_number: '+2348012345678', request_cost: 0.01, delivery_status: { status, updated_at: 1764064800 } });
    assert.deepEqual(gatewayReportReceipts(signed(body('read')), token, now), {
      kind: 'receipts',
      receipts: [{ messageId: 'r1', status: 'DELIVERED', detail: 'read', at: new Date(1764064800_000) }],
    });
    assert.deepEqual(gatewayReportReceipts(signed(body('expired')), token, now), {
      kind: 'receipts',
      receipts: [{ messageId: 'r1', status: 'UNDELIVERED', detail: 'expired', at: new Date(1764064800_000), refunded: true }],
    });
    assert.deepEqual(gatewayReportReceipts(signed(body('something_new')), token, now), { kind: 'receipts', receipts: [] });
    const verifiedOnly = JSON.stringify({ request_id: 'r1', phone_number: '+2348012345678', request_cost: 0.01, verification_status: { status: 'code_valid', updated_at: 1 } });
    assert.deepEqual(gatewayReportReceipts(signed(verifiedOnly), token, now), { kind: 'receipts', receipts: [] });
  });

  it('a signed body that is not a RequestStatus is malformed; a GET or a future timestamp is refused', () => {
    assert.equal(gatewayReportReceipts(signed('{"ok":true}'), token, now).kind, 'malformed');
    assert.equal(gatewayReportReceipts(signed('not json'), token, now).kind, 'malformed');
    assert.equal(gatewayReportReceipts(signed('{}', 'GET'), token, now).kind, 'forbidden');
    assert.equal(gatewayReportReceipts(signed('{}'), token, new Date(now.getTime() - 600_000)).kind, 'forbidden');
  });
});
