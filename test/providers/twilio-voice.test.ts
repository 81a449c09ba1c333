import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import type { CallbackRequest, CallbackResult, OutgoingCall, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { twilio as twilioModule, TwilioProvider } from '../../src/providers/twilio.js';
import type { HangUpTiming } from '../../src/providers/twilio-voice.js';
import { startTwilioPrism, type PrismMock } from '../support/prism.js';
import {
  assertLogsHide,
  assertTimesOutPromptly,
  delayed,
  localServer,
  noAnswer,
  recordingContext,
  refusedUrl,
  replyJson as json,
  resetBeforeAnswer,
  sendOnce,
  type Handler,
  type Seen,
} from './support.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const callbackUrl = 'https://otp.example.org/callbacks/twilio';
const callSid = 'CA0123456789abcdef0123456789abcdef';
const basicAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;

/** The call every test places: from a caller id ending in the code 4821. */
const call: OutgoingCall = { channel: 'call', sendId: 'send-1', verificationId: 'ver-1', to: '+2348012345678', callerId: '+2349010004821' };

type Context = ProviderContext & { lines: string[] };

/** A context ringing for `ringSeconds`, its log kept. */
function context(ringSeconds = 20, url: string | null = callbackUrl): Context {
  return { ...recordingContext(url), callRingSeconds: ringSeconds };
}

/** The provider as the start makes it, with hang-ups bounded as `timing` says (short in tests). */
function createTwilio(baseUrl: string, ctx: ProviderContext = context(), timing: HangUpTiming = { timeoutMs: 1_000, retryDelayMs: 50 }): TwilioProvider {
  const { settings } = twilioModule;
  return new TwilioProvider(
    {
      TWILIO_ACCOUNT_SID: settings.TWILIO_ACCOUNT_SID.parse(accountSid),
      TWILIO_AUTH_TOKEN: settings.TWILIO_AUTH_TOKEN.parse(authToken),
      TWILIO_BASE_URL: settings.TWILIO_BASE_URL.parse(baseUrl),
      TWILIO_MESSAGING_SERVICE_SID: undefined,
      TWILIO_WHATSAPP_SENDER: undefined,
      TWILIO_WHATSAPP_CONTENT_SID: undefined,
    },
    ctx,
    timing,
  );
}

/** A progress callback as Twilio posts it, signed by twilio-node's own helper (what Twilio's servers compute). */
function progress(callStatus: string, extra: Record<string, string> = {}, options: { sid?: string; url?: string; token?: string } = {}): CallbackRequest {
  const form: Record<string, string> = {
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: options.sid ?? callSid,
    CallStatus: callStatus,
    CallbackSource: 'call-progress-events',
    Direction: 'outbound-api',
    From: call.callerId,
    To: call.to,
    SequenceNumber: '1',
    Timestamp: 'Mon, 16 Aug 2026 03:45:01 +0000',
    ...extra,
  };
  const signature = getExpectedTwilioSignature(options.token ?? authToken, options.url ?? callbackUrl, form);
  return {
    method: 'POST',
    url: callbackUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    rawBody: Buffer.from(new URLSearchParams(form).toString()),
  };
}

function verify(provider: TwilioProvider, request: CallbackRequest): CallbackResult {
  return provider.verifyCallback(request);
}

describe("twilio calls against Prism serving Twilio's OpenAPI description (api v2010)", () => {
  let prism: PrismMock;
  before(async () => {
    prism = await startTwilioPrism();
  });
  after(async () => {
    await prism.stop();
  });

  it('places a call Prism accepts as valid (To, From, Twiml, Timeout, the progress callbacks) and reads its CallSid', async () => {
    const result = await sendOnce(createTwilio(prism.url), call);
    assert.equal(result.kind, 'accepted', JSON.stringify(result));
    assert.match(result.kind === 'accepted' ? result.messageId : '', /^CA[0-9a-f]{32}$/i);
  });

  it('a call Prism refuses (StatusCallback not a URI, 422) is permanent', async () => {
    const result = await sendOnce(createTwilio(prism.url, context(20, 'not a uri')), call);
    assert.equal(result.kind, 'permanent');
    assert.match(result.kind === 'permanent' ? result.reason : '', /Twilio refused the call: HTTP 422/);
  });

  it('hangs up at ringing (Status=canceled) and when answered (Status=completed) with requests Prism accepts', async () => {
    const ctx = context();
    const provider = createTwilio(prism.url, ctx);
    const answered = 'CA00000000000000000000000000000002';
    try {
      assert.equal(verify(provider, progress('ringing')).kind, 'receipts');
      assert.equal(verify(provider, progress('in-progress', {}, { sid: answered })).kind, 'receipts');
    } finally {
      await provider.stop();
    }
    // A hang-up Prism refused (422) or could not route (404) would have been logged as one that failed.
    assert.deepEqual(ctx.lines, []);
    assert.match(prism.output(), new RegExp(`post /2010-04-01/Accounts/${accountSid}/Calls/${callSid}\\.json`, 'i'));
    assert.match(prism.output(), new RegExp(`post /2010-04-01/Accounts/${accountSid}/Calls/${answered}\\.json`, 'i'));
  });
});

describe('twilio calls against a local server', () => {
  const server = localServer();
  const { seen } = server;
  const accepted: Handler = (_req, res) => json(res, 201, { sid: callSid, status: 'queued' });

  async function placeAgainst(answer: Handler, options: { ctx?: ProviderContext; signal?: AbortSignal; base?: string } = {}): Promise<SendResult> {
    server.handler = answer;
    return sendOnce(createTwilio(options.base ?? server.url, options.ctx), call, options.signal);
  }
  const creates = (): Seen[] => seen.filter((s) => s.url.endsWith('/Calls.json'));
  const hangUps = (): Seen[] => seen.filter((s) => /\/Calls\/CA[0-9a-f]{32}\.json$/i.test(s.url));

  describe('placing the call', () => {
    it('posts every field Twilio expects, and logs nothing secret', async () => {
      seen.length = 0;
      const ctx = context(20);
      const result = await placeAgainst(accepted, { ctx, base: `${server.url}/proxy/` });
      assert.deepEqual(result, { kind: 'accepted', messageId: callSid });
      const [request] = seen;
      assert.ok(request);
      assert.equal(request.method, 'POST');
      assert.equal(request.url, `/proxy/2010-04-01/Accounts/${accountSid}/Calls.json`);
      assert.equal(request.headers.authorization, basicAuth);
      assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
      assert.deepEqual([...request.form], [
        ['To', call.to],
        ['From', call.callerId],
        ['Twiml', '<Response><Hangup/></Response>'],
        ['Timeout', '20'],
        ['StatusCallback', callbackUrl],
        ['StatusCallbackEvent', 'initiated'],
        ['StatusCallbackEvent', 'ringing'],
        ['StatusCallbackEvent', 'answered'],
        ['StatusCallbackEvent', 'completed'],
        ['StatusCallbackMethod', 'POST'],
      ]);
      assertLogsHide(ctx.lines, [authToken]);
    });

    it('without a callback URL asks for no callbacks: the call rings out after Timeout', async () => {
      seen.length = 0;
      await placeAgainst(accepted, { ctx: context(15, null) });
      assert.deepEqual(Object.fromEntries(seen[0]?.form ?? []), { To: call.to, From: call.callerId, Twiml: '<Response><Hangup/></Response>', Timeout: '15' });
    });

    it('429 is transient with its Retry-After; 5xx is transient', async () => {
      const throttled = await placeAgainst((_req, res) => json(res, 429, { code: 20429, message: 'Too Many Requests' }, { 'retry-after': '3' }));
      assert.deepEqual(throttled, { kind: 'transient', reason: 'Twilio: throttled (HTTP 429, error 20429)', retryAfterSeconds: 3 });
      assert.equal((await placeAgainst((_req, res) => json(res, 500, { code: 20500 }))).kind, 'transient');
      assert.equal((await placeAgainst((_req, res) => json(res, 503, {}))).kind, 'transient');
    });

    it("400 with Twilio's voice error codes is permanent, named, and never echoes Twilio's message", async () => {
      const meanings: Record<number, RegExp> = {
        13223: /invalid phone number format/,
        13224: /invalid phone number \(HTTP 400, error 13224\)/,
        13227: /no permission to call this country/,
        21210: /caller id not verified/,
        21215: /Geo Permissions/,
        21216: /blocked/,
      };
      for (const [code, meaning] of Object.entries(meanings)) {
        const result = await placeAgainst((_req, res) =>
          json(res, 400, { code: Number(code), message: `The number ${call.to} cannot be called from ${call.callerId}`, status: 400 }),
        );
        assert.equal(result.kind, 'permanent', code);
        const reason = result.kind === 'permanent' ? result.reason : '';
        assert.match(reason, /^Twilio refused the call: /);
        assert.match(reason, meaning, code);
        assert.ok(!reason.includes(call.to) && !reason.includes(call.callerId), reason);
      }
      const unknown = await placeAgainst((_req, res) => json(res, 400, { code: 99999 }));
      assert.deepEqual(unknown, { kind: 'permanent', reason: 'Twilio refused the call: HTTP 400, error 99999' });
    });

    it('401/403 is permanent: the credentials were refused (logged once, without the token)', async () => {
      const ctx = context();
      const result = await placeAgainst((_req, res) => json(res, 401, { code: 20003 }), { ctx });
      assert.match(result.kind === 'permanent' ? result.reason : '', /refused the credentials/);
      assert.equal(ctx.lines.length, 1);
      assertLogsHide(ctx.lines, [authToken, basicAuth]);
    });

    it('a 201 without a CallSid is permanent (the call may have been placed: no retry through Twilio)', async () => {
      assert.equal((await placeAgainst((_req, res) => json(res, 201, { status: 'queued' }))).kind, 'permanent');
    });

    it('no answer before the time-out, an abort, or a reset connection is transient, promptly', async () => {
      await assertTimesOutPromptly((signal) => placeAgainst(noAnswer, { signal }), 'Twilio: no answer before the time-out');
      assert.equal((await placeAgainst(resetBeforeAnswer)).kind, 'transient');
    });
  });

  describe('hanging up', () => {
    /** Sends one callback, then stops the provider, which waits for the hang-ups it started. */
    async function callbacksThenStop(
      requests: CallbackRequest[],
      answer: Handler,
      timing?: HangUpTiming,
    ): Promise<{ results: CallbackResult[]; ctx: Context; stopMs: number }> {
      seen.length = 0;
      server.handler = answer;
      const ctx = context();
      const provider = createTwilio(server.url, ctx, timing);
      const results = requests.map((r) => verify(provider, r));
      const started = Date.now();
      await provider.stop();
      return { results, ctx, stopMs: Date.now() - started };
    }
    const updated: Handler = (_req, res) => json(res, 200, { sid: callSid, status: 'canceled' });

    it('at ringing: POST /Calls/{CallSid}.json with Status=canceled and Basic auth, once however often ringing repeats', async () => {
      const { results, ctx } = await callbacksThenStop([progress('ringing'), progress('ringing'), progress('ringing')], updated);
      for (const r of results) assert.deepEqual(r, { kind: 'receipts', receipts: [{ messageId: callSid, status: 'DELIVERED', detail: 'ringing', at: null }] });
      assert.equal(hangUps().length, 1);
      const [hangUp] = hangUps();
      assert.equal(hangUp?.method, 'POST');
      assert.equal(hangUp?.url, `/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`);
      assert.equal(hangUp?.headers.authorization, basicAuth);
      assert.equal(hangUp?.headers['content-type'], 'application/x-www-form-urlencoded');
      assert.deepEqual([...(hangUp?.form ?? [])], [['Status', 'canceled']]);
      assert.deepEqual(ctx.lines, []);
    });

    it('answered (in-progress): Status=completed; a ringing then an answer make one of each', async () => {
      await callbacksThenStop([progress('ringing'), progress('in-progress'), progress('in-progress')], updated);
      assert.deepEqual(hangUps().map((s) => s.form.get('Status')).sort(), ['canceled', 'completed']);
    });

    it('no hang-up for any other status, for a forbidden callback, or for a CallSid Twilio never gives', async () => {
      const others = ['queued', 'initiated', 'completed', 'busy', 'failed', 'no-answer', 'canceled', 'mystery'].map((s) => progress(s));
      const forged = progress('ringing', {}, { token: 'another-token' });
      const odd = progress('ringing', {}, { sid: '../../Messages' });
      const { results, ctx } = await callbacksThenStop([...others, forged, odd], updated);
      assert.equal(results.at(-2)?.kind, 'forbidden');
      assert.deepEqual(seen, []);
      assert.equal(ctx.lines.length, 1, 'the odd CallSid is logged');
    });

    it('does not make the callback wait, and is bounded by its time-out when Twilio does not answer (retried once, then logged)', async () => {
      const started = Date.now();
      const { results, ctx, stopMs } = await callbacksThenStop([progress('ringing')], noAnswer, { timeoutMs: 300, retryDelayMs: 50 });
      assert.equal(results[0]?.kind, 'receipts');
      assert.ok(stopMs >= 500 && Date.now() - started < 3_000, `stop waited ${stopMs} ms`);
      assert.equal(hangUps().length, 2);
      assert.equal(ctx.lines.length, 1);
      assert.match(ctx.lines[0] ?? '', /could not hang up the call/);
      assert.match(ctx.lines[0] ?? '', new RegExp(callSid));
      assertLogsHide(ctx.lines, [authToken, basicAuth]);
    });

    it('a transient failure (503, 429) is retried once; the retry that succeeds logs nothing', async () => {
      let n = 0;
      const { ctx } = await callbacksThenStop([progress('ringing')], (req, res, s) => (n++ === 0 ? json(res, 503, {}) : updated(req, res, s)));
      assert.equal(hangUps().length, 2);
      assert.deepEqual(ctx.lines, []);
      const throttled = await callbacksThenStop([progress('ringing', {}, { sid: 'CA00000000000000000000000000000003' })], (_req, res) =>
        json(res, 429, { code: 20429 }),
      );
      assert.equal(hangUps().length, 2, 'one retry, no more');
      assert.match(throttled.ctx.lines[0] ?? '', /throttled/);
    });

    it('a call that has already ended (400, error 21220) is done: no retry, nothing logged; other refusals are logged, not retried', async () => {
      const over = await callbacksThenStop([progress('ringing')], (_req, res) => json(res, 400, { code: 21220, message: 'Call is not in-progress' }));
      assert.equal(hangUps().length, 1);
      assert.deepEqual(over.ctx.lines, []);
      const missing = await callbacksThenStop([progress('ringing', {}, { sid: 'CA00000000000000000000000000000004' })], (_req, res) =>
        json(res, 404, { code: 20404 }),
      );
      assert.equal(hangUps().length, 1);
      assert.match(missing.ctx.lines[0] ?? '', /no such call/);
    });

    it('stop() waits for a hang-up in flight before closing the connections', async () => {
      const { ctx, stopMs } = await callbacksThenStop([progress('ringing')], delayed(updated, 300));
      assert.ok(stopMs >= 250, `stop waited ${stopMs} ms`);
      assert.equal(hangUps().length, 1);
      assert.deepEqual(ctx.lines, [], 'the hang-up was answered, not cut by the close');
    });
  });
});

describe('twilio call progress callbacks (X-Twilio-Signature)', () => {
  // No hang-up reaches anything here: the API is a refused port, and a ringing callback's hang-up just fails.
  let provider: TwilioProvider;
  before(async () => {
    provider = createTwilio(await refusedUrl(), context(), { timeoutMs: 200, retryDelayMs: 10 });
  });
  after(() => provider.stop());

  it('maps every CallStatus: rang is DELIVERED, busy or failed (no ringing) UNDELIVERED, on its way SENT', () => {
    const expected: Record<string, string> = {
      queued: 'SENT',
      initiated: 'SENT',
      ringing: 'DELIVERED',
      'in-progress': 'DELIVERED',
      completed: 'DELIVERED',
      'no-answer': 'DELIVERED',
      canceled: 'DELIVERED',
      busy: 'UNDELIVERED',
      failed: 'UNDELIVERED',
    };
    for (const [status, ours] of Object.entries(expected)) {
      const result = verify(provider, progress(status, {}, { sid: 'CA0000000000000000000000000000000a' }));
      assert.deepEqual(result, { kind: 'receipts', receipts: [{ messageId: 'CA0000000000000000000000000000000a', status: ours, detail: status, at: null }] }, status);
    }
  });

  it('names the SIP response and error code in the detail when Twilio gives them (digits only)', () => {
    const busy = verify(provider, progress('busy', { SipResponseCode: '486' }));
    assert.equal(busy.kind === 'receipts' ? busy.receipts[0]?.detail : null, 'busy (SipResponseCode 486)');
    const failed = verify(provider, progress('failed', { SipResponseCode: '404', ErrorCode: '32009' }));
    assert.equal(failed.kind === 'receipts' ? failed.receipts[0]?.detail : null, 'failed (SipResponseCode 404, ErrorCode 32009)');
    const odd = verify(provider, progress('failed', { ErrorCode: 'x\ny' }));
    assert.equal(odd.kind === 'receipts' ? odd.receipts[0]?.detail : null, 'failed');
  });

  it('an unknown CallStatus, or no CallSid, gives no receipt', () => {
    assert.deepEqual(verify(provider, progress('mystery')), { kind: 'receipts', receipts: [] });
    assert.deepEqual(verify(provider, progress('busy', {}, { sid: '' })), { kind: 'receipts', receipts: [] });
  });

  it('forbids a missing, bad, other-token or wrong-URL signature, a tampered form, a JSON body and a GET', () => {
    const good = progress('busy');
    const signature = good.headers['x-twilio-signature'] ?? '';
    const forbidden = (request: CallbackRequest) => assert.equal(verify(provider, request).kind, 'forbidden');
    forbidden({ ...good, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    forbidden({ ...good, headers: { ...good.headers, 'x-twilio-signature': '' } });
    forbidden({ ...good, headers: { ...good.headers, 'x-twilio-signature': 'AAAA' } });
    forbidden(progress('busy', {}, { token: 'another-token' }));
    forbidden(progress('busy', {}, { url: `${callbackUrl}/other` }));
    forbidden({ ...good, rawBody: Buffer.from(good.rawBody.toString().replace('CallStatus=busy', 'CallStatus=ringing')) });
    forbidden({ ...good, headers: { 'content-type': 'application/json', 'x-twilio-signature': signature }, rawBody: Buffer.from('{"CallStatus":"busy"}') });
    forbidden({ ...good, method: 'GET' });
    assert.equal(verify(provider, good).kind, 'receipts');
  });

  it('tells a message callback from a call callback on the one route', () => {
    const form = { MessageSid: 'SM0123456789abcdef0123456789abcdef', MessageStatus: 'delivered' };
    const request: CallbackRequest = {
      method: 'POST',
      url: callbackUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': getExpectedTwilioSignature(authToken, callbackUrl, form) },
      rawBody: Buffer.from(new URLSearchParams(form).toString()),
    };
    assert.deepEqual(verify(provider, request), { kind: 'receipts', receipts: [{ messageId: form.MessageSid, status: 'DELIVERED', detail: 'delivered', at: null }] });
  });
});
