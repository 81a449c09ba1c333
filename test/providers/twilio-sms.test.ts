import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import twilio from 'twilio';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import type { CallbackRequest, Provider, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { twilio as twilioModule } from '../../src/providers/twilio.js';
import { twilioSignature } from '../../src/providers/twilio-signature.js';
import { startPrism, twilioApiV2010Spec, type PrismMock } from '../support/prism.js';
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
} from './support.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const messagingServiceSid = 'MG0123456789abcdef0123456789abcdef';
const callbackUrl = 'https://otp.example.org/callbacks/twilio';

/** Parses raw settings as the start does (the default where unset), then creates the provider. */
function createTwilio(raw: Record<string, string>, context: ProviderContext = recordingContext(callbackUrl)): Provider {
  const { settings } = twilioModule;
  const service = raw.TWILIO_MESSAGING_SERVICE_SID;
  return twilioModule.create(
    {
      TWILIO_ACCOUNT_SID: settings.TWILIO_ACCOUNT_SID.parse(raw.TWILIO_ACCOUNT_SID ?? accountSid),
      TWILIO_AUTH_TOKEN: settings.TWILIO_AUTH_TOKEN.parse(raw.TWILIO_AUTH_TOKEN ?? authToken),
      TWILIO_BASE_URL: settings.TWILIO_BASE_URL.parse(raw.TWILIO_BASE_URL ?? settings.TWILIO_BASE_URL.default),
      TWILIO_MESSAGING_SERVICE_SID: service === undefined ? undefined : settings.TWILIO_MESSAGING_SERVICE_SID.parse(service),
      TWILIO_WHATSAPP_SENDER: undefined,
      TWILIO_WHATSAPP_CONTENT_SID: undefined,
    },
    context,
  );
}

function sendWithin(provider: Provider, ms = 10_000): Promise<SendResult> {
  return provider.send(sms, AbortSignal.timeout(ms));
}

describe('twilio provider against Prism serving Twilio\'s OpenAPI description (api v2010)', () => {
  let prism: PrismMock;
  before(async () => {
    prism = await startPrism(twilioApiV2010Spec);
  });
  after(async () => {
    await prism.stop();
  });

  it('sends a message Prism accepts as valid against the description, and reads the sid it answers', async () => {
    const context = recordingContext(callbackUrl);
    const provider = createTwilio({ TWILIO_BASE_URL: prism.url }, context);
    try {
      const result = await sendWithin(provider);
      assert.equal(result.kind, 'accepted', JSON.stringify(result));
      assert.match(result.kind === 'accepted' ? result.messageId : '', /^(SM|MM)[0-9a-f]{32}$/i);
    } finally {
      await provider.stop();
    }
  });

  it('sends through a Messaging Service (MessagingServiceSid instead of From), also valid', async () => {
    const provider = createTwilio({ TWILIO_BASE_URL: prism.url, TWILIO_MESSAGING_SERVICE_SID: messagingServiceSid });
    try {
      assert.equal((await sendWithin(provider)).kind, 'accepted');
    } finally {
      await provider.stop();
    }
  });

  it('a request Prism refuses (StatusCallback not a URI, 422) is permanent', async () => {
    const provider = createTwilio({ TWILIO_BASE_URL: prism.url }, recordingContext('not a uri'));
    try {
      const result = await sendWithin(provider);
      assert.equal(result.kind, 'permanent');
      assert.match(result.kind === 'permanent' ? result.reason : '', /HTTP 422/);
    } finally {
      await provider.stop();
    }
  });

  it('an account SID the path does not allow is refused by Prism and is permanent', async () => {
    // Past the settings' own check, to see the peer refuse it.
    const provider = twilioModule.create(
      {
        TWILIO_ACCOUNT_SID: 'AC123',
        TWILIO_AUTH_TOKEN: authToken,
        TWILIO_BASE_URL: twilioModule.settings.TWILIO_BASE_URL.parse(prism.url),
        TWILIO_MESSAGING_SERVICE_SID: undefined,
        TWILIO_WHATSAPP_SENDER: undefined,
        TWILIO_WHATSAPP_CONTENT_SID: undefined,
      },
      recordingContext(callbackUrl),
    );
    try {
      const result = await sendWithin(provider);
      assert.equal(result.kind, 'permanent', JSON.stringify(result));
      assert.match(result.kind === 'permanent' ? result.reason : '', /HTTP 4\d\d/);
    } finally {
      await provider.stop();
    }
  });
});

describe('twilio provider against a local server playing faults', () => {
  const server = localServer();
  const { seen } = server;

  /** Sends one message with the server answering as `answer` does. */
  async function sendAgainst(
    answer: Handler,
    options: { raw?: Record<string, string>; signal?: AbortSignal; context?: ProviderContext } = {},
  ): Promise<SendResult> {
    server.handler = answer;
    const provider = createTwilio({ TWILIO_BASE_URL: server.url, ...options.raw }, options.context ?? recordingContext(callbackUrl));
    return sendOnce(provider, sms, options.signal);
  }

  it('posts the form Twilio expects: path, Basic auth, To, From, Body, StatusCallback; logs nothing secret', async () => {
    seen.length = 0;
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst((_req, res) => json(res, 201, { sid: 'SM0123456789abcdef0123456789abcdef', status: 'queued' }), {
      context,
      raw: { TWILIO_BASE_URL: `${server.url}/proxy/` },
    });
    assert.deepEqual(result, { kind: 'accepted', messageId: 'SM0123456789abcdef0123456789abcdef' });
    const [request] = seen;
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, `/proxy/2010-04-01/Accounts/${accountSid}/Messages.json`);
    assert.equal(request.headers.authorization, `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`);
    assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(Object.fromEntries(request.form), { To: sms.to, From: sms.from, Body: sms.text, StatusCallback: callbackUrl });
    assertLogsHide(context.lines, [sms.code, authToken]);
  });

  it('with a Messaging Service sends MessagingServiceSid and no From', async () => {
    seen.length = 0;
    await sendAgainst((_req, res) => json(res, 201, { sid: 'SM0123456789abcdef0123456789abcdef' }), {
      raw: { TWILIO_MESSAGING_SERVICE_SID: messagingServiceSid },
    });
    assert.equal(seen[0]?.form.get('MessagingServiceSid'), messagingServiceSid);
    assert.equal(seen[0]?.form.has('From'), false);
  });

  it('500 is transient', async () => {
    const result = await sendAgainst((_req, res) => json(res, 500, { code: 20500, message: 'Internal Server Error' }));
    assert.equal(result.kind, 'transient');
  });

  it('429 is transient with Retry-After read as retryAfterSeconds', async () => {
    const result = await sendAgainst((_req, res) => json(res, 429, { code: 20429, message: 'Too Many Requests' }, { 'retry-after': '7' }));
    assert.deepEqual(result, { kind: 'transient', reason: 'Twilio: throttled (HTTP 429, error 20429)', retryAfterSeconds: 7 });
  });

  it('no answer before the caller aborts: transient, promptly', async () => {
    await assertTimesOutPromptly((signal) => sendAgainst(noAnswer, { signal }), 'Twilio: no answer before the time-out');
  });

  it('a connection closed mid-answer is transient', async () => {
    const result = await sendAgainst(closedMidAnswer(201, '{"sid":"SM0123'));
    assert.equal(result.kind, 'transient', JSON.stringify(result));
  });

  it('a connection reset before any answer is transient', async () => {
    const result = await sendAgainst(resetBeforeAnswer);
    assert.equal(result.kind, 'transient', JSON.stringify(result));
  });

  it('a refused connection is transient', async () => {
    const result = await sendAgainst(noAnswer, { raw: { TWILIO_BASE_URL: await refusedUrl() } });
    assert.equal(result.kind, 'transient');
    assert.match(result.kind === 'transient' ? result.reason : '', /ECONNREFUSED/);
  });

  it('400 with error 21211 (invalid To) is permanent, named, and does not echo Twilio\'s message', async () => {
    const result = await sendAgainst((_req, res) =>
      json(res, 400, { code: 21211, message: `The 'To' number ${sms.to} is not a valid phone number.`, status: 400 }),
    );
    assert.deepEqual(result, { kind: 'permanent', reason: "Twilio refused the message: invalid 'To' number (HTTP 400, error 21211)" });
  });

  it('401 is permanent: the credentials were refused', async () => {
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst((_req, res) => json(res, 401, { code: 20003, message: 'Authenticate' }), { context });
    assert.equal(result.kind, 'permanent');
    assert.match(result.kind === 'permanent' ? result.reason : '', /refused the credentials/);
    assert.equal(context.lines.length, 1);
    assertLogsHide(context.lines, [authToken]);
  });

  it('any other 4xx is permanent; a 201 without a sid is permanent (it may have been taken)', async () => {
    assert.equal((await sendAgainst((_req, res) => json(res, 404, { code: 20404 }))).kind, 'permanent');
    assert.equal((await sendAgainst((_req, res) => json(res, 201, { status: 'queued' }))).kind, 'permanent');
  });

  it('an answer larger than the read bound is not read whole', async () => {
    const result = await sendAgainst((_req, res) => json(res, 201, { sid: 'SM0123456789abcdef0123456789abcdef', pad: 'x'.repeat(200_000) }));
    assert.equal(result.kind, 'permanent');
  });

  it('stop() lets a send in flight end first', async () => {
    server.handler = delayed((_req, res) => json(res, 201, { sid: 'SM0123456789abcdef0123456789abcdef' }));
    assert.equal((await sendThroughStop(createTwilio({ TWILIO_BASE_URL: server.url }), sms)).kind, 'accepted');
  });
});

describe('twilio settings', () => {
  const { settings } = twilioModule;
  it('names, defaults and secrecy', () => {
    assertModuleDeclares(twilioModule, { name: 'twilio', channels: ['sms', 'call', 'whatsapp', 'voice'], callbacks: true });
    assert.equal(settings.TWILIO_BASE_URL.default, 'https://api.twilio.com');
    assert.equal(settings.TWILIO_AUTH_TOKEN.secret, true);
    assert.equal(settings.TWILIO_ACCOUNT_SID.required && settings.TWILIO_AUTH_TOKEN.required, true);
    assert.equal(settings.TWILIO_MESSAGING_SERVICE_SID.required, false);
  });
  it('refuses what cannot work', () => {
    assert.throws(() => settings.TWILIO_BASE_URL.parse('ftp://api.twilio.com'), /http\(s\)/);
    assert.throws(() => settings.TWILIO_BASE_URL.parse('api.twilio.com'), /http\(s\)/);
    assert.throws(() => settings.TWILIO_BASE_URL.parse('https://user:pw@api.twilio.com'), /credentials/);
    assert.throws(() => settings.TWILIO_ACCOUNT_SID.parse('SK0123456789abcdef0123456789abcdef'), /account SID/);
    assert.throws(() => settings.TWILIO_MESSAGING_SERVICE_SID.parse('MG123'), /Messaging Service SID/);
    assert.throws(() => settings.TWILIO_AUTH_TOKEN.parse(' '), /auth token/);
    assert.deepEqual(settings.TWILIO_BASE_URL.parse('http://127.0.0.1:4010/twilio/'), { origin: 'http://127.0.0.1:4010', pathPrefix: '/twilio' });
  });
});

/** Signs a form as Twilio documents it, independently of the provider's code. */
function signLikeTwilio(token: string, url: string, form: Record<string, string>): string {
  const data = Object.keys(form)
    .sort()
    .reduce((acc, key) => acc + key + form[key], url);
  return createHmac('sha1', token).update(data, 'utf8').digest('base64');
}

describe('twilio status callbacks (X-Twilio-Signature)', () => {
  const provider = createTwilio({});
  after(() => provider.stop());

  const callback = (form: Record<string, string>, signature: string | undefined, url = callbackUrl): CallbackRequest => ({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', 'x-twilio-signature': signature },
    rawBody: Buffer.from(new URLSearchParams(form).toString()),
  });
  const form = {
    MessageSid: 'SM0123456789abcdef0123456789abcdef',
    MessageStatus: 'undelivered',
    ErrorCode: '30006',
    AccountSid: accountSid,
    From: '+14155550100',
    To: '+2348012345678',
    ApiVersion: '2010-04-01',
    SmsStatus: 'undelivered',
  };
  const verify = (request: CallbackRequest) => {
    assert.ok(provider.verifyCallback);
    return provider.verifyCallback(request);
  };

  it('accepts a correctly signed callback and reads its receipt', () => {
    const result = verify(callback(form, signLikeTwilio(authToken, callbackUrl, form)));
    assert.deepEqual(result, {
      kind: 'receipts',
      receipts: [{ messageId: form.MessageSid, status: 'UNDELIVERED', detail: 'undelivered (ErrorCode 30006)', at: null }],
    });
  });

  it('maps every MessageStatus', () => {
    const expected: Record<string, string> = {
      queued: 'SENT', accepted: 'SENT', sending: 'SENT', sent: 'SENT',
      delivered: 'DELIVERED', undelivered: 'UNDELIVERED', failed: 'UNDELIVERED',
    };
    for (const [status, ours] of Object.entries(expected)) {
      const body = { MessageSid: form.MessageSid, MessageStatus: status };
      const result = verify(callback(body, signLikeTwilio(authToken, callbackUrl, body)));
      assert.equal(result.kind === 'receipts' ? result.receipts[0]?.status : result.reason, ours, status);
      assert.equal(result.kind === 'receipts' ? result.receipts[0]?.detail : null, status);
    }
  });

  it('forbids a missing, wrong, other-token or tampered signature, and a non-form body', () => {
    const good = signLikeTwilio(authToken, callbackUrl, form);
    assert.equal(verify(callback(form, undefined)).kind, 'forbidden');
    assert.equal(verify(callback(form, '')).kind, 'forbidden');
    assert.equal(verify(callback(form, 'AAAA')).kind, 'forbidden');
    assert.equal(verify(callback(form, signLikeTwilio('another-token', callbackUrl, form))).kind, 'forbidden');
    assert.equal(verify(callback({ ...form, MessageStatus: 'delivered' }, good)).kind, 'forbidden');
    assert.equal(verify(callback(form, good, `${callbackUrl}/other`)).kind, 'forbidden');
    assert.equal(verify({ ...callback(form, good), headers: { 'content-type': 'application/json', 'x-twilio-signature': good } }).kind, 'forbidden');
    assert.equal(verify({ ...callback(form, good), method: 'GET' }).kind, 'forbidden');
  });

  it('accepts the URL with or without its default port, whichever Twilio signed', () => {
    const withPort = 'https://otp.example.org:443/callbacks/twilio';
    assert.equal(verify(callback(form, signLikeTwilio(authToken, withPort, form))).kind, 'receipts');
    assert.equal(verify(callback(form, signLikeTwilio(authToken, callbackUrl, form), withPort)).kind, 'receipts');
  });

  it('agrees with Twilio\'s own checker (twilio-node validateRequest / getExpectedTwilioSignature)', () => {
    const urls = [callbackUrl, 'https://otp.example.org:443/callbacks/twilio?x=1&y=two', 'http://127.0.0.1:8080/callbacks/twilio'];
    const bodies: Record<string, string>[] = [form, { MessageSid: form.MessageSid, MessageStatus: 'sent', Body: 'héllo wörld + 100% & more' }, {}];
    for (const url of urls) {
      for (const body of bodies) {
        const params = new URLSearchParams(body);
        const ours = twilioSignature(authToken, url, params);
        assert.equal(twilio.validateRequest(authToken, ours, url, body), true, `${url} ${JSON.stringify(body)}`);
        const theirs = getExpectedTwilioSignature(authToken, url, body);
        assert.equal(theirs, ours);
        assert.equal(verify(callback(body, theirs, url)).kind, 'receipts');
      }
    }
    // A parameter sent twice: Twilio's checker takes each distinct value once, sorted.
    const repeated = new URLSearchParams([['MessageSid', form.MessageSid], ['Tag', 'b'], ['Tag', 'a'], ['Tag', 'b']]);
    const ours = twilioSignature(authToken, callbackUrl, repeated);
    assert.equal(twilio.validateRequest(authToken, ours, callbackUrl, { MessageSid: form.MessageSid, Tag: ['b', 'a', 'b'] }), true);
  });
});
