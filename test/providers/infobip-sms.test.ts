import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OutgoingSms, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { infobipSms } from '../../src/providers/infobip-sms.js';
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
  sendOnce,
  sendThroughStop,
  type Handler,
} from './support.js';
import { apiKey, callbackUrl, createInfobip, pendingAnswer, secret, sms } from './infobip-fixtures.js';

/**
 * What Infobip's description of `POST /sms/3/messages` requires of a request body (SmsRequestEnvelope:
 * messages[] of SmsMessage { sender, destinations[] of { to (<= 64), messageId (<= 200) }, content { text },
 * webhooks { delivery { url, intermediateReport, notify }, contentType, callbackData } }), written out here
 * independently of the provider. Unknown fields are violations too: they catch v2's `from`, `text`, `notifyUrl`.
 */
function v3Violations(body: unknown): string[] {
  const out: string[] = [];
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const only = (o: Record<string, unknown>, at: string, allowed: string[]) => {
    for (const key of Object.keys(o)) if (!allowed.includes(key)) out.push(`${at}.${key}: not in the v3 description`);
  };
  if (!isObject(body)) return ['body: not an object'];
  only(body, 'body', ['messages', 'options']);
  if (!Array.isArray(body.messages) || body.messages.length === 0) return [...out, 'messages: required, non-empty array'];
  body.messages.forEach((m: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) return void out.push(`${at}: not an object`);
    only(m, at, ['sender', 'destinations', 'content', 'options', 'webhooks']);
    if (m.sender !== undefined && typeof m.sender !== 'string') out.push(`${at}.sender: not a string`);
    if (!Array.isArray(m.destinations) || m.destinations.length === 0) out.push(`${at}.destinations: required, non-empty array`);
    else
      m.destinations.forEach((d: unknown, j) => {
        const dat = `${at}.destinations[${j}]`;
        if (!isObject(d)) return void out.push(`${dat}: not an object`);
        only(d, dat, ['to', 'messageId', 'networkId']);
        if (typeof d.to !== 'string' || d.to.length > 64) out.push(`${dat}.to: required string of at most 64`);
        if (d.messageId !== undefined && (typeof d.messageId !== 'string' || d.messageId.length > 200)) out.push(`${dat}.messageId: string of at most 200`);
      });
    if (!isObject(m.content) || typeof m.content.text !== 'string') out.push(`${at}.content.text: required string`);
    else only(m.content, `${at}.content`, ['text', 'transliteration', 'language']);
    if (m.webhooks !== undefined) {
      if (!isObject(m.webhooks)) return void out.push(`${at}.webhooks: not an object`);
      only(m.webhooks, `${at}.webhooks`, ['delivery', 'contentType', 'callbackData']);
      const delivery = m.webhooks.delivery;
      if (delivery !== undefined) {
        if (!isObject(delivery)) out.push(`${at}.webhooks.delivery: not an object`);
        else {
          only(delivery, `${at}.webhooks.delivery`, ['url', 'intermediateReport', 'notify']);
          if (typeof delivery.url !== 'string') out.push(`${at}.webhooks.delivery.url: not a string`);
        }
      }
      const contentType = m.webhooks.contentType;
      if (contentType !== undefined && contentType !== 'application/json' && contentType !== 'application/xml') {
        out.push(`${at}.webhooks.contentType: application/json or application/xml`);
      }
    }
  });
  return out;
}

/** Answers like Infobip: 400 with the violations when the body breaks the description, else the documented 200. */
const documentedAnswer: Handler = (_req, res, seen) => {
  const violations = v3Violations(seen.json);
  if (violations.length > 0) {
    json(res, 400, { errorCode: 'E400', description: 'Request cannot be processed.', action: '', violations: violations.map((v) => ({ property: v.split(':')[0], violation: v })), resources: [] });
    return;
  }
  const first = (seen.json as { messages: { destinations: { messageId?: string }[] }[] }).messages[0]?.destinations[0];
  json(res, 200, pendingAnswer(first?.messageId ?? 'generated-by-infobip'));
};

describe('infobip provider against a local receiver checking the v3 request as documented', () => {
  const server = localServer(documentedAnswer);
  const { seen } = server;

  /** Sends one message with the receiver answering as `answer` does. */
  async function sendAgainst(
    answer: Handler,
    options: { raw?: Record<string, string>; signal?: AbortSignal; context?: ProviderContext; message?: OutgoingSms } = {},
  ): Promise<SendResult> {
    server.handler = answer;
    const provider = createInfobip({ INFOBIP_BASE_URL: server.url, ...options.raw }, options.context ?? recordingContext(callbackUrl));
    return sendOnce(provider, options.message ?? sms, options.signal);
  }

  it('posts the documented v3 body with App authorization, and reads the message id it answers; logs nothing secret', async () => {
    seen.length = 0;
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst(documentedAnswer, { context, raw: { INFOBIP_BASE_URL: `${server.url}/proxy/` } });
    assert.deepEqual(result, { kind: 'accepted', messageId: sms.sendId });
    const [request] = seen;
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/proxy/sms/3/messages');
    assert.equal(request.headers.authorization, `App ${apiKey}`);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers.accept, 'application/json');
    assert.deepEqual(v3Violations(request.json), []);
    assert.deepEqual(request.json, {
      messages: [
        {
          sender: 'OTPService',
          destinations: [{ to: '2348012345678', messageId: sms.sendId }],
          content: { text: sms.text },
          webhooks: { delivery: { url: `${callbackUrl}/${secret}` }, contentType: 'application/json' },
        },
      ],
    });
    assertLogsHide(context.lines, [sms.code, apiKey, secret]);
  });

  it('a numeric sender goes as international digits, like the number; without a callback URL no webhooks are asked for', async () => {
    seen.length = 0;
    const result = await sendAgainst(documentedAnswer, { context: recordingContext(null), message: { ...sms, from: '+14155550100' } });
    assert.equal(result.kind, 'accepted');
    assert.deepEqual(seen[0]?.json, {
      messages: [{ sender: '14155550100', destinations: [{ to: '2348012345678', messageId: sms.sendId }], content: { text: sms.text } }],
    });
  });

  it('the receiver does refuse a v2-shaped body (so the checks above have teeth)', () => {
    const v2 = { messages: [{ from: 'OTPService', destinations: [{ to: '2348012345678' }], text: 'x', notifyUrl: callbackUrl }] };
    assert.deepEqual(v3Violations(v2), [
      'messages[0].from: not in the v3 description',
      'messages[0].text: not in the v3 description',
      'messages[0].notifyUrl: not in the v3 description',
      'messages[0].content.text: required string',
    ]);
  });

  it('a REJECTED status group in a 200 answer is permanent and names the status', async () => {
    const result = await sendAgainst((_req, res) =>
      json(res, 200, {
        bulkId: 'b-1',
        messages: [{ messageId: sms.sendId, status: { groupId: 5, groupName: 'REJECTED', id: 51, name: 'REJECTED_DESTINATION', description: 'Destination rejected' }, destination: '2348012345678' }],
      }),
    );
    assert.deepEqual(result, { kind: 'permanent', reason: 'Infobip refused the message: REJECTED_DESTINATION (status group REJECTED)' });
  });

  it('400 (validation) is permanent, names the properties, and echoes neither the number nor Infobip\'s text', async () => {
    const result = await sendAgainst((_req, res) =>
      json(res, 400, {
        errorCode: 'E400',
        description: 'Request cannot be processed.',
        action: 'Check the syntax, violations and adjust the request.',
        violations: [{ property: 'messages[0].destinations[0].to', violation: `Invalid destination address ${sms.to}` }],
        resources: [],
      }),
    );
    assert.deepEqual(result, { kind: 'permanent', reason: 'Infobip refused the message (HTTP 400, E400; invalid: messages[0].destinations[0].to)' });
  });

  it('401 and 403 are permanent: the credentials were refused; one warning, without the key', async () => {
    for (const [status, code] of [[401, 'E401'], [403, 'E403']] as const) {
      const context = recordingContext(callbackUrl);
      const result = await sendAgainst((_req, res) => json(res, status, { errorCode: code, description: 'x', action: 'x', violations: [], resources: [] }), { context });
      assert.equal(result.kind, 'permanent', String(status));
      assert.match(result.kind === 'permanent' ? result.reason : '', new RegExp(`refused the credentials .*HTTP ${status}, ${code}`));
      assert.equal(context.lines.length, 1);
      assertLogsHide(context.lines, [apiKey]);
    }
  });

  it('429 is transient with Retry-After read as retryAfterSeconds (seconds or HTTP date)', async () => {
    const throttled = { errorCode: 'E429', description: 'Too many requests sent.', action: '', violations: [], resources: [] };
    const result = await sendAgainst((_req, res) => json(res, 429, throttled, { 'retry-after': '7' }));
    assert.deepEqual(result, { kind: 'transient', reason: 'Infobip: throttled (HTTP 429, E429)', retryAfterSeconds: 7 });
    const date = new Date(Date.now() + 30_000).toUTCString();
    const dated = await sendAgainst((_req, res) => json(res, 429, throttled, { 'retry-after': date }));
    assert.ok(dated.kind === 'transient' && dated.retryAfterSeconds !== undefined && dated.retryAfterSeconds >= 28 && dated.retryAfterSeconds <= 31, JSON.stringify(dated));
    const bare = await sendAgainst((_req, res) => json(res, 429, throttled));
    assert.deepEqual(bare, { kind: 'transient', reason: 'Infobip: throttled (HTTP 429, E429)' });
  });

  it('500 and 503 are transient; an older service exception\'s code is read too', async () => {
    const result = await sendAgainst((_req, res) => json(res, 500, { errorCode: 'E500', description: 'Something went wrong.', action: '', violations: [], resources: [] }));
    assert.deepEqual(result, { kind: 'transient', reason: 'Infobip: server error (HTTP 500, E500)' });
    const old = await sendAgainst((_req, res) => json(res, 503, { requestError: { serviceException: { messageId: 'GENERAL_ERROR', text: 'x' } } }));
    assert.deepEqual(old, { kind: 'transient', reason: 'Infobip: server error (HTTP 503, GENERAL_ERROR)' });
  });

  it('no answer before the caller aborts: transient, promptly', async () => {
    await assertTimesOutPromptly((signal) => sendAgainst(noAnswer, { signal }), 'Infobip: no answer before the time-out');
  });

  it('a connection closed mid-answer, reset before any answer, or refused is transient', async () => {
    const midway = await sendAgainst(closedMidAnswer(200, '{"messages":[{"messageId":"send-'));
    assert.equal(midway.kind, 'transient', JSON.stringify(midway));
    const reset = await sendAgainst(resetBeforeAnswer);
    assert.equal(reset.kind, 'transient', JSON.stringify(reset));
    const refused = await sendAgainst(noAnswer, { raw: { INFOBIP_BASE_URL: await refusedUrl() } });
    assert.equal(refused.kind, 'transient');
    assert.match(refused.kind === 'transient' ? refused.reason : '', /ECONNREFUSED/);
  });

  it('a 200 without a message id, an answer too large to read, and any other 4xx are permanent', async () => {
    assert.equal((await sendAgainst((_req, res) => json(res, 200, { bulkId: 'b', messages: [] }))).kind, 'permanent');
    assert.equal((await sendAgainst((_req, res) => json(res, 200, { ...pendingAnswer(sms.sendId), pad: 'x'.repeat(200_000) }))).kind, 'permanent');
    assert.equal((await sendAgainst((_req, res) => json(res, 404, { errorCode: 'E404' }))).kind, 'permanent');
  });

  it('stop() lets a send in flight end first', async () => {
    server.handler = delayed(documentedAnswer);
    assert.equal((await sendThroughStop(createInfobip({ INFOBIP_BASE_URL: server.url }), sms)).kind, 'accepted');
  });
});

describe('infobip settings', () => {
  const { settings } = infobipSms;
  it('names, defaults and secrecy', () => {
    assertModuleDeclares(infobipSms, { name: 'infobip', channels: ['sms'], callbacks: true });
    assert.equal(settings.INFOBIP_BASE_URL.default, undefined);
    assert.equal(settings.INFOBIP_BASE_URL.required && settings.INFOBIP_API_KEY.required && settings.INFOBIP_CALLBACK_SECRET.required, true);
    assert.equal(settings.INFOBIP_API_KEY.secret && settings.INFOBIP_CALLBACK_SECRET.secret, true);
  });
  it('refuses what cannot work, without printing a secret', () => {
    assert.throws(() => settings.INFOBIP_BASE_URL.parse('xxxxx.api.infobip.com'), /https:\/\/xxxxx\.api\.infobip\.com/);
    assert.throws(() => settings.INFOBIP_BASE_URL.parse('https://user:pw@xxxxx.api.infobip.com'), /credentials/);
    assert.throws(() => settings.INFOBIP_BASE_URL.parse('https://xxxxx.api.infobip.com/?a=1'), /query/);
    assert.deepEqual(settings.INFOBIP_BASE_URL.parse('https://xxxxx.api.infobip.com/'), { origin: 'https://xxxxx.api.infobip.com', pathPrefix: '' });
    for (const bad of ['App 003026bbc133714df1834b', 'k3y9', '']) {
      assert.throws(() => settings.INFOBIP_API_KEY.parse(bad), (err: Error) => /Infobip API key/.test(err.message) && (bad === '' || !err.message.includes(bad)));
    }
    for (const bad of ['too-short-secret-0123456789', `${secret}/x`, `${secret} `, `${secret}%20`]) {
      assert.throws(() => settings.INFOBIP_CALLBACK_SECRET.parse(bad), (err: Error) => !err.message.includes(bad) && !err.message.includes(secret));
    }
    assert.equal(settings.INFOBIP_CALLBACK_SECRET.parse(secret), secret);
  });
});
