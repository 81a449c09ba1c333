import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { OutgoingSms, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { vonage as vonageSms } from '../../src/providers/vonage.js';
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
  replyJson as json,
  resetBeforeAnswer,
  sampleSms as sms,
  sendOnce,
  sendThroughStop,
  type Handler,
  type Seen,
} from './support.js';
import { apiKey, apiSecret, callbackUrl, createVonage, signatureSecret, signLikeVonage } from './vonage-fixtures.js';

/*
 * Vonage's own OpenAPI description of the SMS API (test/peers/vonage/sms.yml) is served by Prism in
 * vonage-sms-prism.test.ts, but it knows only credentials in the form and answers only its one example, so here
 * the API is played by a local server that checks each field Vonage's SMS API reference documents
 * (https://developer.vonage.com/en/api/sms) and answers as it documents, every status included.
 */

/**
 * The fields the SMS API reference documents for POST /sms/json (form-encoded): from, to (7 to 15 digits) and text
 * required; type one of text, binary, unicode; callback at most 100 characters; client-ref at most 100; and
 * either Basic authentication, or api_key (8 characters), timestamp (integer) and sig (16 to 60) without an
 * api_secret nor an Authorization header. Returns what is wrong, or null. The OpenAPI description caps sig at
 * 60 characters, which would refuse the hex of a SHA-256 or SHA-512 HMAC that Vonage's own SDKs send: 128 here.
 */
function documentedProblem(seen: Seen): string | null {
  const { form, headers } = seen;
  if (seen.method !== 'POST') return 'method';
  if (!(headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return 'content-type';
  const known = new Set(['api_key', 'api_secret', 'sig', 'timestamp', 'from', 'to', 'text', 'ttl', 'status-report-req', 'callback', 'message-class', 'type', 'body', 'udh', 'protocol-id', 'client-ref', 'account-ref', 'entity-id', 'content-id', 'trusted-number', 'pool-id']);
  for (const name of form.keys()) if (!known.has(name)) return `unknown field ${name}`;
  for (const name of form.keys()) if (form.getAll(name).length !== 1) return `repeated field ${name}`;
  if (!form.get('from')) return 'from';
  if (!/^\d{7,15}$/.test(form.get('to') ?? '')) return 'to';
  if (!form.get('text')) return 'text';
  const type = form.get('type');
  if (type !== null && !['text', 'binary', 'unicode'].includes(type)) return 'type';
  const callback = form.get('callback');
  if (callback !== null && callback.length > 100) return 'callback';
  const ref = form.get('client-ref');
  if (ref !== null && ref.length > 100) return 'client-ref';
  const sig = form.get('sig');
  if (sig !== null) {
    if (headers.authorization !== undefined) return 'Authorization with sig';
    if (form.has('api_secret')) return 'api_secret with sig';
    if (!/^[A-Za-z0-9]{8}$/.test(form.get('api_key') ?? '')) return 'api_key';
    if (!/^\d+$/.test(form.get('timestamp') ?? '')) return 'timestamp';
    if (!/^[0-9A-Fa-f]{32,128}$/.test(sig)) return 'sig';
  } else if (!/^Basic [A-Za-z0-9+/=]+$/.test(headers.authorization ?? '') && !(form.has('api_key') && form.has('api_secret'))) {
    return 'credentials';
  }
  return null;
}

describe('vonage provider against a local stand-in of the SMS API', () => {
  const server = localServer();
  const { seen } = server;

  async function sendAgainst(
    answer: Handler,
    options: { raw?: Record<string, string | undefined>; signal?: AbortSignal; context?: ProviderContext; message?: OutgoingSms } = {},
  ): Promise<SendResult> {
    server.handler = answer;
    const provider = createVonage({ VONAGE_BASE_URL: server.url, ...options.raw }, options.context ?? recordingContext(callbackUrl));
    return sendOnce(provider, options.message ?? sms, options.signal);
  }
  /** An SMS API answer with one message of this status, as documented. */
  const answerStatus = (status: string) => (_req: http.IncomingMessage, res: http.ServerResponse) =>
    json(res, 200, status === '0'
      ? { 'message-count': '1', messages: [{ to: '2348012345678', 'message-id': '0A0000001234567B', status: '0', 'remaining-balance': '3.14', 'message-price': '0.03', network: '62130', 'client-ref': 'send-1' }] }
      : { 'message-count': '1', messages: [{ status, 'error-text': `Something about ${sms.to}` }] });

  it('posts the form Vonage documents: path, Basic auth, from/to as digits, text, callback, client-ref; logs nothing secret', async () => {
    seen.length = 0;
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst(answerStatus('0'), { context, raw: { VONAGE_BASE_URL: `${server.url}/proxy/` } });
    assert.deepEqual(result, { kind: 'accepted', messageId: '0A0000001234567B', price: { amount: '0.03', currency: 'EUR' } });
    const [request] = seen;
    assert.ok(request);
    assert.equal(documentedProblem(request), null);
    assert.equal(request.url, '/proxy/sms/json');
    assert.equal(request.headers.authorization, `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`);
    assert.deepEqual(Object.fromEntries(request.form), {
      from: '14155550100',
      to: '2348012345678',
      text: sms.text,
      callback: callbackUrl,
      'client-ref': 'send-1',
    });
    assertLogsHide(context.lines, [sms.code, apiSecret]);
  });

  it('sends type=unicode only when the text is not GSM 7-bit, and an alphanumeric sender as it is', async () => {
    seen.length = 0;
    await sendAgainst(answerStatus('0'), { message: { ...sms, text: 'Votre code: 482913 — merci', from: 'Acme' } });
    await sendAgainst(answerStatus('0'), { message: { ...sms, text: 'Code {482913} [€] ~^|' } });
    assert.equal(seen[0]?.form.get('type'), 'unicode');
    assert.equal(seen[0]?.form.get('from'), 'Acme');
    assert.equal(seen[1]?.form.has('type'), false);
    for (const s of seen) assert.equal(documentedProblem(s), null);
  });

  it('without an API secret signs the request (api_key, timestamp, sig; no Authorization) as Vonage documents', async () => {
    for (const method of ['md5hash', 'sha256', 'sha512'] as const) {
      seen.length = 0;
      const result = await sendAgainst(answerStatus('0'), { raw: { VONAGE_API_SECRET: undefined, VONAGE_SIGNATURE_METHOD: method } });
      assert.equal(result.kind, 'accepted');
      const [request] = seen;
      assert.ok(request);
      assert.equal(documentedProblem(request), null);
      assert.equal(request.headers.authorization, undefined);
      assert.equal(request.form.get('api_key'), apiKey);
      assert.ok(Math.abs(Number(request.form.get('timestamp')) - Date.now() / 1000) < 60);
      const params = Object.fromEntries(request.form);
      assert.equal(request.form.get('sig')?.toLowerCase(), signLikeVonage(signatureSecret, method, params).toLowerCase(), method);
    }
  });

  it('status 1 (throttled), 5 (internal error) and 10 (too many binds) are transient', async () => {
    for (const status of ['1', '5', '10']) {
      const result = await sendAgainst(answerStatus(status));
      assert.equal(result.kind, 'transient', status);
    }
  });

  it('every other documented status is permanent, named, and never echoes Vonage\'s error-text', async () => {
    const expected: Record<string, RegExp> = {
      '2': /missing parameters/, '3': /invalid parameters/, '4': /invalid credentials/, '6': /invalid message/,
      '7': /number barred/, '8': /account barred/, '9': /insufficient credit/, '11': /not enabled/, '12': /too long/,
      '14': /invalid signature/, '15': /sender not allowed/, '17': /blocked/, '22': /network code/, '23': /callback URL/,
      '29': /whitelisted/, '32': /signature and API secret/, '33': /de-activated/, '99': /status 99\)/,
    };
    for (const [status, meaning] of Object.entries(expected)) {
      const result = await sendAgainst(answerStatus(status));
      assert.equal(result.kind, 'permanent', status);
      const reason = result.kind === 'permanent' ? result.reason : '';
      assert.match(reason, meaning, status);
      assert.match(reason, new RegExp(`status ${status}\\b`));
      assert.ok(!reason.includes(sms.to.slice(1)), reason);
    }
  });

  it('a message sent in part (one part 0, another failed) is permanent: retrying could send the code twice', async () => {
    const result = await sendAgainst((_req, res) =>
      json(res, 200, { 'message-count': '2', messages: [{ status: '0', 'message-id': 'A1' }, { status: '5', 'error-text': 'x' }] }),
    );
    assert.equal(result.kind, 'permanent');
    const whole = await sendAgainst((_req, res) =>
      json(res, 200, { 'message-count': '2', messages: [{ status: '0', 'message-id': 'A1' }, { status: '0', 'message-id': 'A2' }] }),
    );
    assert.deepEqual(whole, { kind: 'accepted', messageId: 'A1' });
  });

  it("a message in parts is priced at the sum of its parts' message-price, in VONAGE_CURRENCY", async () => {
    const parts = (...prices: (string | undefined)[]) => (_req: http.IncomingMessage, res: http.ServerResponse) =>
      json(res, 200, {
        'message-count': String(prices.length),
        messages: prices.map((price, i) => ({ status: '0', 'message-id': `A${i + 1}`, 'remaining-balance': '3.14', ...(price === undefined ? {} : { 'message-price': price }) })),
      });
    // 0.0333 three times is 0.0999 exactly: a sum in floating point would be 0.09989999999999999.
    const three = await sendAgainst(parts('0.03330000', '0.03330000', '0.03330000'), { raw: { VONAGE_CURRENCY: 'usd' } });
    assert.deepEqual(three, { kind: 'accepted', messageId: 'A1', price: { amount: '0.0999', currency: 'USD' } });
    assert.deepEqual(await sendAgainst(parts('0.03330000')), { kind: 'accepted', messageId: 'A1', price: { amount: '0.0333', currency: 'EUR' } });
    // A part without a price (or with one that is not a decimal) would make the sum too low: no price at all.
    for (const missing of [undefined, '', 'free', '-0.0333']) {
      const result = await sendAgainst(parts('0.03330000', missing));
      assert.deepEqual(result, { kind: 'accepted', messageId: 'A1' }, String(missing));
    }
  });

  it('429 is transient with Retry-After read as retryAfterSeconds', async () => {
    const result = await sendAgainst((_req, res) => json(res, 429, {}, { 'retry-after': '7' }));
    assert.deepEqual(result, { kind: 'transient', reason: 'Vonage: throttled (HTTP 429)', retryAfterSeconds: 7 });
  });

  it('500 and 503 are transient', async () => {
    assert.equal((await sendAgainst((_req, res) => json(res, 500, {}))).kind, 'transient');
    assert.equal((await sendAgainst((_req, res) => json(res, 503, {}))).kind, 'transient');
  });

  it('401 is permanent: the credentials were refused, logged without the secret', async () => {
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst((_req, res) => json(res, 401, { type: 'unauthorized' }), { context });
    assert.equal(result.kind, 'permanent');
    assert.match(result.kind === 'permanent' ? result.reason : '', /refused the credentials/);
    assert.equal(context.lines.length, 1);
    assertLogsHide(context.lines, [apiSecret]);
  });

  it('no answer before the caller aborts: transient, promptly', async () => {
    await assertTimesOutPromptly((signal) => sendAgainst(noAnswer, { signal }), 'Vonage: no answer before the time-out');
  });

  it('a connection closed mid-answer, or reset before one, is transient', async () => {
    const midway = await sendAgainst(closedMidAnswer(200, '{"message-count":"1","messages":[{"status":"0"'));
    assert.equal(midway.kind, 'transient', JSON.stringify(midway));
    const reset = await sendAgainst(resetBeforeAnswer);
    assert.equal(reset.kind, 'transient', JSON.stringify(reset));
  });

  it('a refused connection is transient', async () => {
    const result = await sendAgainst(noAnswer, { raw: { VONAGE_BASE_URL: await refusedUrl() } });
    assert.match(result.kind === 'transient' ? result.reason : '', /ECONNREFUSED/);
  });

  it('an answer without messages, or a status 0 without a message-id, or too large, is permanent', async () => {
    assert.equal((await sendAgainst((_req, res) => json(res, 200, {}))).kind, 'permanent');
    assert.equal((await sendAgainst((_req, res) => json(res, 200, { messages: [{ status: '0' }] }))).kind, 'permanent');
    const large = await sendAgainst((_req, res) => json(res, 200, { messages: [{ status: '0', 'message-id': 'A1' }], pad: 'x'.repeat(200_000) }));
    assert.equal(large.kind, 'permanent');
  });

  it('stop() lets a send in flight end first', async () => {
    server.handler = delayed(answerStatus('0'));
    assert.equal((await sendThroughStop(createVonage({ VONAGE_BASE_URL: server.url }), sms)).kind, 'accepted');
  });
});

describe('vonage settings', () => {
  const { settings } = vonageSms;
  it('names, defaults and secrecy', () => {
    assertModuleDeclares(vonageSms, { name: 'vonage', channels: ['sms', 'voice'], callbacks: true });
    assert.equal(settings.VONAGE_BASE_URL.default, 'https://rest.nexmo.com');
    assert.equal(settings.VONAGE_SIGNATURE_METHOD.default, 'md5hash');
    assert.equal(settings.VONAGE_CURRENCY.default, 'EUR');
    assert.equal(settings.VONAGE_CURRENCY.required, false);
    assert.equal(settings.VONAGE_API_SECRET.secret, true);
    assert.equal(settings.VONAGE_SIGNATURE_SECRET.secret, true);
    assert.equal(settings.VONAGE_API_KEY.required && settings.VONAGE_SIGNATURE_SECRET.required, true);
    assert.equal(settings.VONAGE_API_SECRET.required, false);
  });
  it('refuses what cannot work, never repeating a secret', () => {
    assert.throws(() => settings.VONAGE_API_KEY.parse('abc'), /8 letters or digits/);
    assert.throws(() => settings.VONAGE_SIGNATURE_METHOD.parse('sha384'), /md5hash, md5, sha1, sha256, sha512/);
    assert.throws(() => settings.VONAGE_BASE_URL.parse('ftp://rest.nexmo.com'), /http\(s\)/);
    assert.throws(() => settings.VONAGE_BASE_URL.parse('https://k:s@rest.nexmo.com'), /credentials/);
    assert.equal(settings.VONAGE_CURRENCY.parse(' gbp '), 'GBP');
    for (const bad of ['EURO', '€', 'E1R', 'US', '']) assert.throws(() => settings.VONAGE_CURRENCY.parse(bad), /ISO 4217/, bad);
    for (const [setting, value] of [[settings.VONAGE_API_SECRET, ' s3cret-value '], [settings.VONAGE_SIGNATURE_SECRET, ' s1gnature-value']] as const) {
      assert.throws(() => setting.parse(value), (err: Error) => !err.message.includes(value.trim()) && /without spaces/.test(err.message));
    }
  });
  it('refuses a callback URL longer than Vonage accepts', () => {
    assert.throws(() => createVonage({}, recordingContext(`https://otp.example.org/${'x'.repeat(90)}/callbacks/vonage`)), /100 characters/);
  });
});
