import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { CallbackRequest, OutgoingSms, Provider, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { termiiSms } from '../../src/providers/termii-sms.js';
import {
  assertLogsHide,
  assertModuleDeclares,
  assertTimesOutPromptly,
  closedMidAnswer,
  delayed,
  localServer,
  noAnswer,
  recordingContext,
  refusedUrl,
  resetBeforeAnswer,
  sampleSms as sms,
  sendOnce,
  sendThroughStop,
  type Handler,
  type Seen,
} from './support.js';

/*
 * Termii publishes no OpenAPI description (nor does any npm package ship one), so its send API is played by a
 * local server that checks each field its Messaging API page documents (https://developer.termii.com/messaging-api)
 * and answers as its pages and SDKs show.
 */

const apiKey = 'TLtest-api-key-0123456789';
const secretKey = 'test-secret-key-0123456789';
const callbackUrl = 'https://otp.example.org/callbacks/termii';

function createTermii(raw: Record<string, string>, context: ProviderContext = recordingContext(callbackUrl)): Provider {
  const { settings } = termiiSms;
  const sender = raw.TERMII_SENDER_ID;
  return termiiSms.create(
    {
      TERMII_API_KEY: settings.TERMII_API_KEY.parse(raw.TERMII_API_KEY ?? apiKey),
      TERMII_SECRET_KEY: settings.TERMII_SECRET_KEY.parse(raw.TERMII_SECRET_KEY ?? secretKey),
      TERMII_SENDER_ID: sender === undefined ? undefined : settings.TERMII_SENDER_ID.parse(sender),
      TERMII_CHANNEL: settings.TERMII_CHANNEL.parse(raw.TERMII_CHANNEL ?? settings.TERMII_CHANNEL.default),
      TERMII_BASE_URL: settings.TERMII_BASE_URL.parse(raw.TERMII_BASE_URL ?? settings.TERMII_BASE_URL.default),
    },
    context,
  );
}

/**
 * The body Termii documents for POST /api/sms/send (JSON): api_key, to (international format, digits), from (a
 * sender ID of 3 to 11 characters, or a number), sms, type and channel (generic, dnd or whatsapp), all required
 * strings, nothing else for an SMS. Returns what is wrong, or null.
 */
function documentedProblem(seen: Seen): string | null {
  if (seen.method !== 'POST') return 'method';
  if (!(seen.headers['content-type'] ?? '').startsWith('application/json')) return 'content-type';
  const body = seen.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body';
  const fields = Object.entries(body);
  const names = fields.map(([name]) => name).sort();
  if (names.join(',') !== 'api_key,channel,from,sms,to,type') return `fields ${names.join(',')}`;
  const get = (name: string): unknown => fields.find(([n]) => n === name)?.[1];
  if (get('api_key') !== apiKey) return 'api_key';
  if (typeof get('to') !== 'string' || !/^\d{7,15}$/.test(String(get('to')))) return 'to';
  const from = String(get('from'));
  if (typeof get('from') !== 'string' || !(/^\d{7,15}$/.test(from) || (from.length >= 3 && from.length <= 11))) return 'from';
  if (typeof get('sms') !== 'string' || get('sms') === '') return 'sms';
  if (!['plain', 'unicode'].includes(String(get('type')))) return 'type';
  if (!['generic', 'dnd', 'whatsapp'].includes(String(get('channel')))) return 'channel';
  return null;
}

describe('termii provider against a local stand-in of the send API', () => {
  const server = localServer();
  const { seen } = server;

  async function sendAgainst(
    answer: Handler,
    options: { raw?: Record<string, string>; signal?: AbortSignal; context?: ProviderContext; message?: OutgoingSms } = {},
  ): Promise<SendResult> {
    server.handler = answer;
    const provider = createTermii({ TERMII_BASE_URL: server.url, ...options.raw }, options.context ?? recordingContext(callbackUrl));
    return sendOnce(provider, options.message ?? sms, options.signal);
  }

  const reply = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
  /** Termii's documented success answer. */
  const accepted = (_req: http.IncomingMessage, res: http.ServerResponse) =>
    reply(res, 200, JSON.stringify({ code: 'ok', message_id: '9122821270554876574', message_id_str: '9122821270554876574', message: 'Successfully Sent', balance: 9, user: 'Peter Mcleish' }));

  it('posts the JSON Termii documents: path, api_key, to as digits, from, sms, type plain, channel; logs nothing secret', async () => {
    seen.length = 0;
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst(accepted, { context, raw: { TERMII_BASE_URL: `${server.url}/proxy/`, TERMII_SENDER_ID: 'N-Alert' } });
    assert.deepEqual(result, { kind: 'accepted', messageId: '9122821270554876574' });
    const [request] = seen;
    assert.ok(request);
    assert.equal(documentedProblem(request), null);
    assert.equal(request.url, '/proxy/api/sms/send');
    assert.deepEqual(request.json, { api_key: apiKey, to: '2348012345678', from: 'N-Alert', sms: sms.text, type: 'plain', channel: 'generic' });
    assert.equal(request.headers.authorization, undefined);
    assertLogsHide(context.lines, [sms.code, apiKey]);
  });

  it("without TERMII_SENDER_ID sends the message's own sender; unicode text as type unicode; the dnd channel", async () => {
    seen.length = 0;
    await sendAgainst(accepted, { raw: { TERMII_CHANNEL: 'dnd' }, message: { ...sms, text: 'Code: 482913 ✓' } });
    const [request] = seen;
    assert.ok(request);
    assert.equal(documentedProblem(request), null);
    assert.deepEqual(request.json, { api_key: apiKey, to: '2348012345678', from: '14155550100', sms: 'Code: 482913 ✓', type: 'unicode', channel: 'dnd' });
  });

  it('reads a 19-digit message_id sent as a JSON number without rounding it', async () => {
    const result = await sendAgainst((_req, res) => reply(res, 200, '{"code":"ok","message_id":9122821270554876574,"message":"Successfully Sent","balance":9}'));
    assert.deepEqual(result, { kind: 'accepted', messageId: '9122821270554876574' });
  });

  it('each documented refusal is permanent and named, never with Termii\'s own words', async () => {
    const cases: [number, string, RegExp][] = [
      [400, 'Insufficient balance', /insufficient balance/],
      [400, 'Invalid Sender Id', /sender ID/],
      [422, 'Sender ID not approved', /sender ID/],
      [400, 'You are not set up on this route', /route/],
      [400, 'Your account is not active', /not active/],
      [400, 'Your device has reached the daily limit', /daily limit/],
      [400, `Invalid phone number ${sms.to}`, /invalid phone number/],
      [404, 'Not found', /HTTP 404/],
      [200, 'Insufficient balance', /insufficient balance/],
    ];
    for (const [status, message, meaning] of cases) {
      const result = await sendAgainst((_req, res) => reply(res, status, JSON.stringify({ message })));
      assert.equal(result.kind, 'permanent', message);
      const reason = result.kind === 'permanent' ? result.reason : '';
      assert.match(reason, meaning, message);
      assert.ok(!reason.includes(message) && !reason.includes(sms.to.slice(1)), reason);
    }
  });

  it('401 and 403 are permanent: the API key was refused, logged without it', async () => {
    for (const status of [401, 403]) {
      const context = recordingContext(callbackUrl);
      const result = await sendAgainst((_req, res) => reply(res, status, '{"message":"Unauthorized"}'), { context });
      assert.match(result.kind === 'permanent' ? result.reason : '', /refused the API key/);
      assert.equal(context.lines.length, 1);
      assertLogsHide(context.lines, [apiKey]);
    }
  });

  it('429 is transient with Retry-After read as retryAfterSeconds', async () => {
    const result = await sendAgainst((_req, res) => reply(res, 429, '{"message":"Too Many Requests"}', { 'retry-after': '12' }));
    assert.deepEqual(result, { kind: 'transient', reason: 'Termii: throttled (HTTP 429)', retryAfterSeconds: 12 });
  });

  it('500 and 502 are transient', async () => {
    assert.equal((await sendAgainst((_req, res) => reply(res, 500, '{"message":"Server Error"}'))).kind, 'transient');
    assert.equal((await sendAgainst((_req, res) => reply(res, 502, '<html>bad gateway</html>'))).kind, 'transient');
  });

  it('no answer before the caller aborts: transient, promptly', async () => {
    await assertTimesOutPromptly((signal) => sendAgainst(noAnswer, { signal }), 'Termii: no answer before the time-out');
  });

  it('a connection closed mid-answer, reset before one, or refused, is transient', async () => {
    const midway = await sendAgainst(closedMidAnswer(200, '{"code":"ok","message_id":"91228'));
    assert.equal(midway.kind, 'transient', JSON.stringify(midway));
    assert.equal((await sendAgainst(resetBeforeAnswer)).kind, 'transient');
    const refused = await sendAgainst(noAnswer, { raw: { TERMII_BASE_URL: await refusedUrl() } });
    assert.match(refused.kind === 'transient' ? refused.reason : '', /ECONNREFUSED/);
  });

  it('a 200 without a message_id is permanent (it may have been taken)', async () => {
    assert.equal((await sendAgainst((_req, res) => reply(res, 200, '{"code":"ok"}'))).kind, 'permanent');
    assert.equal((await sendAgainst((_req, res) => reply(res, 200, 'not json'))).kind, 'permanent');
  });

  it('stop() lets a send in flight end first', async () => {
    server.handler = delayed(accepted);
    assert.equal((await sendThroughStop(createTermii({ TERMII_BASE_URL: server.url }), sms)).kind, 'accepted');
  });
});

describe('termii settings', () => {
  const { settings } = termiiSms;
  it('names, defaults and secrecy', () => {
    assertModuleDeclares(termiiSms, { name: 'termii', channels: ['sms'], callbacks: true });
    assert.equal(settings.TERMII_BASE_URL.default, 'https://api.ng.termii.com');
    assert.equal(settings.TERMII_CHANNEL.default, 'generic');
    assert.equal(settings.TERMII_API_KEY.secret && settings.TERMII_SECRET_KEY.secret, true);
    assert.equal(settings.TERMII_API_KEY.required && settings.TERMII_SECRET_KEY.required, true);
    assert.equal(settings.TERMII_SENDER_ID.required, false);
  });
  it('refuses what cannot work, never repeating a secret', () => {
    assert.throws(() => settings.TERMII_CHANNEL.parse('whatsapp'), /generic, dnd/);
    assert.throws(() => settings.TERMII_SENDER_ID.parse('AB'), /3 to 11/);
    assert.throws(() => settings.TERMII_SENDER_ID.parse('WayTooLongSender'), /3 to 11/);
    assert.throws(() => settings.TERMII_BASE_URL.parse('api.ng.termii.com'), /http\(s\)/);
    assert.throws(() => settings.TERMII_API_KEY.parse(` ${apiKey}`), (err: Error) => !err.message.includes(apiKey) && /without spaces/.test(err.message));
    assert.throws(() => settings.TERMII_SECRET_KEY.parse(''), /secret key/);
    assert.equal(settings.TERMII_SENDER_ID.parse('N-Alert'), 'N-Alert');
  });
});

/** Signs a body as Termii documents it, independently of the provider's code. */
const signLikeTermii = (key: string, body: Buffer) => createHmac('sha512', key).update(body).digest('hex');

describe('termii delivery reports (X-Termii-Signature)', () => {
  const provider = createTermii({});
  after(() => provider.stop());

  /** An outbound-message event with the fields Termii's events page documents. */
  const event = (overrides: Record<string, unknown> = {}) =>
    Buffer.from(JSON.stringify({
      type: 'outbound',
      id: '4b1d7c0a-0000-4000-8000-000000000001',
      message_id: '9122821270554876574',
      receiver: '2348012345678',
      sender: 'N-Alert',
      message: sms.text,
      sent_at: '2024-05-01 10:00:00',
      cost: '2.50',
      status: 'Delivered',
      channel: 'dnd',
      ...overrides,
    }));
  const post = (body: Buffer, signature: string | undefined): CallbackRequest => ({
    method: 'POST',
    url: 'https://otp.example.org/callbacks/termii',
    headers: { 'content-type': 'application/json', 'x-termii-signature': signature },
    rawBody: body,
  });
  const verify = (request: CallbackRequest) => {
    assert.ok(provider.verifyCallback);
    return provider.verifyCallback(request);
  };

  it('accepts a signed report and reads its receipt', () => {
    const body = event();
    assert.deepEqual(verify(post(body, signLikeTermii(secretKey, body))), {
      kind: 'receipts',
      receipts: [{ messageId: '9122821270554876574', status: 'DELIVERED', detail: 'Delivered', at: null }],
    });
    assert.equal(verify(post(body, signLikeTermii(secretKey, body).toUpperCase())).kind, 'receipts');
  });

  it('maps each documented status', () => {
    const expected: Record<string, string> = {
      Delivered: 'DELIVERED', DELIVERED: 'DELIVERED', 'Message Sent': 'SENT', 'DND Active on Phone Number': 'UNDELIVERED',
      'Message Failed': 'UNDELIVERED', Rejected: 'UNDELIVERED', Expired: 'UNDELIVERED',
    };
    for (const [status, ours] of Object.entries(expected)) {
      const body = event({ status });
      const result = verify(post(body, signLikeTermii(secretKey, body)));
      assert.equal(result.kind === 'receipts' ? result.receipts[0]?.status : result.reason, ours, status);
    }
    const other = event({ status: 'Device Offline' });
    assert.deepEqual(verify(post(other, signLikeTermii(secretKey, other))), { kind: 'receipts', receipts: [] });
    const numeric = Buffer.from(event().toString().replace('"9122821270554876574"', '9122821270554876574'));
    const read = verify(post(numeric, signLikeTermii(secretKey, numeric)));
    assert.equal(read.kind === 'receipts' ? read.receipts[0]?.messageId : null, '9122821270554876574');
  });

  it('refuses a missing, wrong, other-key or tampered signature, and a GET', () => {
    const body = event();
    const good = signLikeTermii(secretKey, body);
    assert.equal(verify(post(body, undefined)).kind, 'forbidden');
    assert.equal(verify(post(body, '')).kind, 'forbidden');
    assert.equal(verify(post(body, 'abcd')).kind, 'forbidden');
    assert.equal(verify(post(body, signLikeTermii('another-key', body))).kind, 'forbidden');
    assert.equal(verify(post(event({ status: 'Message Failed' }), good)).kind, 'forbidden');
    assert.equal(verify(post(Buffer.from(`${body.toString()} `), good)).kind, 'forbidden');
    assert.equal(verify({ ...post(body, good), method: 'GET' }).kind, 'forbidden');
  });
});
