import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Outgoing, OutgoingCall, OutgoingSms, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { httpGateway } from '../../src/providers/http-gateway.js';
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
  sampleSms,
  sendOnce,
  sendThroughStop,
  type Handler,
  type Seen,
} from './support.js';
import { callbackUrl, createGateway, secret } from './http-gateway-fixtures.js';

const sms: OutgoingSms = { ...sampleSms, from: '+2348000000000' };

const call: OutgoingCall = {
  channel: 'call',
  sendId: 'send-2',
  verificationId: 'ver-2',
  to: '+2348012345678',
  callerId: '+2348000482913',
};

/** Nothing of the code, the text or the secret in any log line. */
function assertNothingSecret(lines: readonly string[]): void {
  assertLogsHide(lines, [sms.code, sms.text, call.callerId, secret, secret.slice('whsec_'.length)]);
}

describe('http gateway provider against a local gateway', () => {
  const server = localServer();
  const { seen } = server;

  /** Sends one message or call with the gateway answering as `answer` does. */
  async function sendAgainst(
    answer: Handler,
    options: { message?: Outgoing; url?: string; signal?: AbortSignal; context?: ProviderContext } = {},
  ): Promise<SendResult> {
    server.handler = answer;
    const provider = createGateway(options.url ?? `${server.url}/otp/send`, options.context ?? recordingContext(callbackUrl));
    return sendOnce(provider, options.message ?? sms, options.signal);
  }

  /** The body as the gateway would read it: its signature checked by the standardwebhooks package. */
  const verified = (request: Seen | undefined): unknown => {
    assert.ok(request);
    const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = request.headers;
    assert.ok(typeof id === 'string' && typeof timestamp === 'string' && typeof signature === 'string');
    return new Webhook(secret).verify(request.raw, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });
  };

  it('an SMS: the signed JSON POST a Standard Webhooks library verifies, with Idempotency-Key; accepted under the messageId', async () => {
    seen.length = 0;
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst((_req, res) => json(res, 200, { messageId: 'gw-17' }), { context, url: `${server.url}/otp/send?route=a` });
    assert.deepEqual(result, { kind: 'accepted', messageId: 'gw-17' });
    const [request] = seen;
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/otp/send?route=a');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['idempotency-key'], sms.sendId);
    assert.equal(request.headers['webhook-id'], sms.sendId);
    assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 5);
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(verified(request), {
      id: sms.sendId,
      verificationId: sms.verificationId,
      channel: 'sms',
      to: sms.to,
      from: sms.from,
      text: sms.text,
      callbackUrl,
    });
    assert.equal(request.raw.includes(sms.code), true);
    assertNothingSecret(context.lines);
  });

  it('a call: callerId and no from or text', async () => {
    seen.length = 0;
    const result = await sendAgainst((_req, res) => json(res, 201, { messageId: 'call-9' }), { message: call });
    assert.deepEqual(result, { kind: 'accepted', messageId: 'call-9' });
    assert.equal(seen[0]?.headers['idempotency-key'], call.sendId);
    assert.deepEqual(verified(seen[0]), {
      id: call.sendId,
      verificationId: call.verificationId,
      channel: 'call',
      to: call.to,
      callerId: call.callerId,
      callbackUrl,
    });
  });

  it('a retry of one send carries the same id, Idempotency-Key and body, freshly signed', async () => {
    seen.length = 0;
    await sendAgainst((_req, res) => json(res, 200, { messageId: 'gw-1' }));
    await sendAgainst((_req, res) => json(res, 200, { messageId: 'gw-1' }));
    const [first, second] = seen;
    assert.ok(first && second);
    assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
    assert.equal(first.headers['idempotency-key'], second.headers['idempotency-key']);
    assert.equal(first.raw, second.raw);
  });

  it('2xx without a usable messageId is accepted under the send id (the gateway took it; a failure would send twice)', async () => {
    const empty = await sendAgainst((_req, res) => res.writeHead(202).end());
    assert.deepEqual(empty, { kind: 'accepted', messageId: sms.sendId });
    const text = await sendAgainst((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('OK'));
    assert.deepEqual(text, { kind: 'accepted', messageId: sms.sendId });
    const context = recordingContext(callbackUrl);
    for (const messageId of [42, '', 'x'.repeat(201), 'id\nforged log line']) {
      const result = await sendAgainst((_req, res) => json(res, 200, { messageId }), { context, message: call });
      assert.deepEqual(result, { kind: 'accepted', messageId: call.sendId });
    }
    assert.equal(context.lines.length, 4);
    assertNothingSecret(context.lines);
  });

  it('400, 404, 410, 422 are permanent with the gateway\'s error, sanitized and bounded', async () => {
    for (const status of [400, 404, 410, 422]) {
      const result = await sendAgainst((_req, res) => json(res, status, { error: 'number barred' }));
      assert.deepEqual(result, { kind: 'permanent', reason: `gateway refused the message (HTTP ${status}: number barred)` });
    }
    const echoing = await sendAgainst((_req, res) =>
      json(res, 400, { error: `cannot send "${sms.text}"\r\n\u001b[31mFAKE LOG LINE\u202e ${sms.code} ${'y'.repeat(300)}` }),
    );
    assert.equal(echoing.kind, 'permanent');
    const reason = echoing.kind === 'permanent' ? echoing.reason : '';
    const error = /HTTP 400: (.*)\)$/.exec(reason)?.[1] ?? '';
    assert.ok(error.startsWith('cannot send "******" [31mFAKE LOG LINE ****** yyy'), error);
    assert.equal(Array.from(error).length, 200);
    assert.doesNotMatch(reason, /[\p{Cc}\p{Cf}]/u);
    assert.ok(!reason.includes(sms.code));
    const call404 = await sendAgainst((_req, res) => json(res, 404, { error: `no route for ${call.callerId}` }), { message: call });
    assert.deepEqual(call404, { kind: 'permanent', reason: 'gateway refused the message (HTTP 404: no route for ******)' });
    const other = await sendAgainst((_req, res) => json(res, 405, {}));
    assert.deepEqual(other, { kind: 'permanent', reason: 'gateway refused the message (HTTP 405)' });
  });

  it('401 and 403 are permanent: the signature was refused; the warning holds no secret', async () => {
    for (const status of [401, 403]) {
      const context = recordingContext(callbackUrl);
      const result = await sendAgainst((_req, res) => json(res, status, { error: 'bad signature' }), { context });
      assert.deepEqual(result, {
        kind: 'permanent',
        reason: `gateway refused the signature (HTTP ${status}: bad signature): check HTTP_GATEWAY_SECRET`,
      });
      assert.equal(context.lines.length, 1);
      assertNothingSecret(context.lines);
    }
  });

  it('429 with Retry-After is transient with retryAfterSeconds; 408 and 409 are transient', async () => {
    const throttled = await sendAgainst((_req, res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '7' }));
    assert.deepEqual(throttled, { kind: 'transient', reason: 'gateway: try again later (HTTP 429: slow down)', retryAfterSeconds: 7 });
    const dated = await sendAgainst((_req, res) =>
      json(res, 429, {}, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }),
    );
    assert.ok(dated.kind === 'transient' && dated.retryAfterSeconds !== undefined && dated.retryAfterSeconds > 50, JSON.stringify(dated));
    assert.deepEqual(await sendAgainst((_req, res) => json(res, 408, {})), { kind: 'transient', reason: 'gateway: try again later (HTTP 408)' });
    assert.equal((await sendAgainst((_req, res) => json(res, 409, { error: 'in progress' }))).kind, 'transient');
  });

  it('500 and 503 are transient, 503 with its Retry-After', async () => {
    assert.deepEqual(await sendAgainst((_req, res) => json(res, 500, { error: 'boom' })), {
      kind: 'transient',
      reason: 'gateway: server error (HTTP 500: boom)',
    });
    const unavailable = await sendAgainst((_req, res) => res.writeHead(503, { 'retry-after': '30' }).end('down'));
    assert.deepEqual(unavailable, { kind: 'transient', reason: 'gateway: server error (HTTP 503)', retryAfterSeconds: 30 });
  });

  it('no answer before the caller aborts: transient, promptly', async () => {
    await assertTimesOutPromptly((signal) => sendAgainst(noAnswer, { signal }), 'gateway: no answer before the time-out');
    const slowBody = await sendAgainst(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"messageId":');
      },
      { signal: AbortSignal.timeout(300) },
    );
    assert.deepEqual(slowBody, { kind: 'transient', reason: 'gateway: no answer before the time-out' });
  });

  it('a connection closed mid-answer is transient (the retry\'s Idempotency-Key recovers the messageId)', async () => {
    const result = await sendAgainst(closedMidAnswer(200, '{"messageId":"gw-'));
    assert.equal(result.kind, 'transient', JSON.stringify(result));
  });

  it('a connection reset before any answer, or refused, is transient', async () => {
    assert.equal((await sendAgainst(resetBeforeAnswer)).kind, 'transient');
    const refused = await sendAgainst(noAnswer, { url: `${await refusedUrl()}/` });
    assert.equal(refused.kind, 'transient');
    assert.match(refused.kind === 'transient' ? refused.reason : '', /ECONNREFUSED/);
  });

  it('an answer over 64 KiB is not read whole: a 2xx is accepted under the send id, an error keeps only its status', async () => {
    const pad = 'x'.repeat(70 * 1024);
    assert.deepEqual(await sendAgainst((_req, res) => json(res, 200, { messageId: 'gw-big', pad })), {
      kind: 'accepted',
      messageId: sms.sendId,
    });
    assert.deepEqual(await sendAgainst((_req, res) => json(res, 422, { error: 'too long', pad })), {
      kind: 'permanent',
      reason: 'gateway refused the message (HTTP 422)',
    });
    // Endless: the read stops at the bound rather than waiting for an end.
    const endless = await sendAgainst((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'y'.repeat(16 * 1024);
      const timer = setInterval(() => res.write(chunk), 1);
      res.on('close', () => clearInterval(timer));
    });
    assert.deepEqual(endless, { kind: 'accepted', messageId: sms.sendId });
  });

  it('a redirect is not followed and is permanent', async () => {
    seen.length = 0;
    const result = await sendAgainst((_req, res) => res.writeHead(307, { location: `${server.url}/elsewhere` }).end());
    assert.equal(result.kind, 'permanent');
    assert.equal(seen.length, 1);
  });

  it('stop() lets a send in flight end first and may be called twice', async () => {
    server.handler = delayed((_req, res) => json(res, 200, { messageId: 'late' }));
    assert.deepEqual(await sendThroughStop(createGateway(`${server.url}/otp/send`), sms), { kind: 'accepted', messageId: 'late' });
  });
});

describe('http gateway settings', () => {
  const { settings } = httpGateway;
  it('names, channels, callbacks, secrecy', () => {
    assertModuleDeclares(httpGateway, { name: 'http', channels: ['sms', 'call'], callbacks: true });
    assert.equal(settings.HTTP_GATEWAY_URL.required && settings.HTTP_GATEWAY_SECRET.required, true);
    assert.equal(settings.HTTP_GATEWAY_SECRET.secret, true);
    assert.equal(settings.HTTP_GATEWAY_URL.default, undefined);
    assert.match(settings.HTTP_GATEWAY_SECRET.doc, /openssl rand -base64 32/);
  });
  it('refuses what cannot work', () => {
    assert.throws(() => settings.HTTP_GATEWAY_URL.parse('ftp://gw.example.org'), /http\(s\)/);
    assert.throws(() => settings.HTTP_GATEWAY_URL.parse('gw.example.org/send'), /http\(s\)/);
    assert.throws(() => settings.HTTP_GATEWAY_URL.parse('https://user:pw@gw.example.org/send'), /credentials/);
    assert.throws(() => settings.HTTP_GATEWAY_URL.parse('https://gw.example.org/send#x'), /fragment/);
    assert.deepEqual(settings.HTTP_GATEWAY_URL.parse('https://gw.example.org:8443/otp?x=1'), {
      origin: 'https://gw.example.org:8443',
      path: '/otp?x=1',
    });
    assert.throws(() => settings.HTTP_GATEWAY_SECRET.parse(randomBytes(32).toString('base64')), /whsec_/);
    assert.throws(() => settings.HTTP_GATEWAY_SECRET.parse('whsec_not base64!'), /whsec_/);
    assert.throws(() => settings.HTTP_GATEWAY_SECRET.parse(`whsec_${randomBytes(16).toString('base64')}`), /24 random bytes/);
    assert.equal(settings.HTTP_GATEWAY_SECRET.parse(secret), secret);
  });
  it('is not created without a callback URL (the start refuses it without PUBLIC_BASE_URL)', () => {
    assert.throws(() => createGateway('http://127.0.0.1:9/', recordingContext(null)), /PUBLIC_BASE_URL/);
  });
});
