import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import type { CallbackRequest, OutgoingSms, Provider, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { africastalkingSms } from '../../src/providers/africastalking-sms.js';
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
} from './support.js';

const username = 'otp-app';
const apiKey = 'atsk_2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e1f3a5b7c9d1e3f5a7b9c1d3e5f7a9b1c';
const secret = 'Zq8W3e5R7t9Y1u3I5o7P9a1S3d5F7g9H';
const callbackUrl = 'https://otp.example.org/callbacks/africastalking';

const sms: OutgoingSms = { ...sampleSms, to: '+254711000111', text: 'Your code is 482913 & more' };

/** Parses raw settings as the start does (the default where unset), then creates the provider. */
function createAfricasTalking(raw: Record<string, string>, context: ProviderContext = recordingContext(callbackUrl)): Provider {
  const { settings } = africastalkingSms;
  const sender = raw.AFRICASTALKING_SENDER_ID;
  return africastalkingSms.create(
    {
      AFRICASTALKING_USERNAME: settings.AFRICASTALKING_USERNAME.parse(raw.AFRICASTALKING_USERNAME ?? username),
      AFRICASTALKING_API_KEY: settings.AFRICASTALKING_API_KEY.parse(raw.AFRICASTALKING_API_KEY ?? apiKey),
      AFRICASTALKING_BASE_URL: settings.AFRICASTALKING_BASE_URL.parse(raw.AFRICASTALKING_BASE_URL ?? settings.AFRICASTALKING_BASE_URL.default),
      AFRICASTALKING_SENDER_ID: sender === undefined ? undefined : settings.AFRICASTALKING_SENDER_ID.parse(sender),
      AFRICASTALKING_CALLBACK_SECRET: settings.AFRICASTALKING_CALLBACK_SECRET.parse(raw.AFRICASTALKING_CALLBACK_SECRET ?? secret),
    },
    context,
  );
}

/** The answer Africa's Talking documents for one recipient (its SDK expects 201 Created). */
const answerFor = (statusCode: number, status: string, messageId = 'ATXid_4a1b2c3d4e5f') => ({
  SMSMessageData: {
    Message: statusCode < 200 ? 'Sent to 1/1 Total Cost: KES 0.8000' : 'Sent to 0/1 Total Cost: 0',
    Recipients: [{ statusCode, number: sms.to, status, cost: statusCode < 200 ? 'KES 0.8000' : '0', messageId: statusCode < 200 ? messageId : 'None' }],
  },
});

describe('africastalking provider against a local receiver', () => {
  const server = localServer();
  const { seen } = server;

  async function sendAgainst(
    answer: Handler,
    options: { raw?: Record<string, string>; signal?: AbortSignal; context?: ProviderContext } = {},
  ): Promise<SendResult> {
    server.handler = answer;
    const provider = createAfricasTalking({ AFRICASTALKING_BASE_URL: server.url, ...options.raw }, options.context ?? recordingContext(callbackUrl));
    return sendOnce(provider, sms, options.signal);
  }

  it('posts the documented form: path, apiKey header, Accept JSON, username, to (E.164 with +), message; logs nothing secret', async () => {
    seen.length = 0;
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst((_req, res) => json(res, 201, answerFor(101, 'Success')), { context, raw: { AFRICASTALKING_BASE_URL: `${server.url}/proxy/` } });
    assert.deepEqual(result, { kind: 'accepted', messageId: 'ATXid_4a1b2c3d4e5f', price: { currency: 'KES', amount: '0.8' } });
    const [request] = seen;
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/proxy/version1/messaging');
    assert.equal(request.headers.apikey, apiKey);
    assert.equal(request.headers.accept, 'application/json');
    assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(request.headers.authorization, undefined);
    // Encoded as a form: '+' of the number and spaces and '&' of the text escaped.
    assert.equal(request.raw, 'username=otp-app&to=%2B254711000111&message=Your+code+is+482913+%26+more');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(request.raw)), { username, to: sms.to, message: sms.text });
    assertLogsHide(context.lines, [sms.code, apiKey, secret]);
  });

  it('sends from AFRICASTALKING_SENDER_ID when set, never SMS_SENDER_NUMBER', async () => {
    seen.length = 0;
    await sendAgainst((_req, res) => json(res, 201, answerFor(101, 'Success')), { raw: { AFRICASTALKING_SENDER_ID: 'OTPService' } });
    assert.equal(new URLSearchParams(seen[0]?.raw).get('from'), 'OTPService');
  });

  it('statusCodes 100, 101 and 102 (also as strings) are accepted with the message id and the cost as the price', async () => {
    for (const [code, status] of [[100, 'Processed'], [101, 'Success'], [102, 'Queued']] as const) {
      assert.deepEqual(await sendAgainst((_req, res) => json(res, 201, answerFor(code, status))), {
        kind: 'accepted',
        messageId: 'ATXid_4a1b2c3d4e5f',
        price: { currency: 'KES', amount: '0.8' },
      });
    }
    const asString = { SMSMessageData: { Message: 'Sent to 1/1', Recipients: [{ statusCode: '101', status: 'Success', messageId: 'ATXid_9', cost: 'UGX 25.0000' }] } };
    assert.deepEqual(await sendAgainst((_req, res) => json(res, 201, asString)), { kind: 'accepted', messageId: 'ATXid_9', price: { currency: 'UGX', amount: '25' } });
  });

  it('a cost that is not "<currency> <amount>" gives no price: the accepted send is priced from the imported prices', async () => {
    const withCost = (cost: unknown) => ({
      SMSMessageData: { Message: 'Sent to 1/1', Recipients: [{ statusCode: 101, status: 'Success', messageId: 'ATXid_9', cost }] },
    });
    // The one well-formed cost first: without it, none of the others could tell a price dropped from one never read.
    assert.deepEqual(await sendAgainst((_req, res) => json(res, 201, withCost(' NGN  4.2500 '))), {
      kind: 'accepted',
      messageId: 'ATXid_9',
      price: { currency: 'NGN', amount: '4.25' },
    });
    for (const cost of ['0', '', 'KES', '0.8000 KES', 'kes 0.8000', 'KSh 0.8000', 'KES -0.8', 'KES 0,80', 'KES 0.8 each', 'KES 1e3', 0.8, null]) {
      const result = await sendAgainst((_req, res) => json(res, 201, withCost(cost)));
      assert.deepEqual(result, { kind: 'accepted', messageId: 'ATXid_9' }, JSON.stringify(cost));
    }
    const without = { SMSMessageData: { Message: 'Sent to 1/1', Recipients: [{ statusCode: 101, status: 'Success', messageId: 'ATXid_9' }] } };
    assert.deepEqual(await sendAgainst((_req, res) => json(res, 201, without)), { kind: 'accepted', messageId: 'ATXid_9' });
  });

  it('every refusing statusCode is permanent or transient as mapped, named, without the number', async () => {
    const expected: [number, string, 'permanent' | 'transient'][] = [
      [401, 'RiskHold', 'permanent'],
      [402, 'InvalidSenderId', 'permanent'],
      [403, 'InvalidPhoneNumber', 'permanent'],
      [404, 'UnsupportedNumberType', 'permanent'],
      [405, 'InsufficientBalance', 'permanent'],
      [406, 'UserInBlacklist', 'permanent'],
      [407, 'CouldNotRoute', 'permanent'],
      [409, 'DoNotDisturbRejection', 'permanent'],
      [500, 'InternalServerError', 'transient'],
      [501, 'GatewayError', 'transient'],
      [502, 'RejectedByGateway', 'permanent'],
      [408, 'SomethingNew', 'permanent'],
      [503, 'SomethingNew', 'transient'],
    ];
    for (const [code, name, kind] of expected) {
      const result = await sendAgainst((_req, res) => json(res, 201, answerFor(code, name)));
      assert.equal(result.kind, kind, `${code}`);
      const reason = 'reason' in result ? result.reason : '';
      const known = name === 'SomethingNew' ? 'unknown' : name;
      assert.ok(reason.includes(`statusCode ${code} ${known}, HTTP 201`), reason);
      assert.ok(!reason.includes(sms.to));
    }
  });

  it('a DoNotDisturbRejection answered as HTTP 409 with the usual body is read by its statusCode', async () => {
    const result = await sendAgainst((_req, res) => json(res, 409, answerFor(409, 'DoNotDisturbRejection')));
    assert.deepEqual(result, { kind: 'permanent', reason: "Africa's Talking refused the message (statusCode 409 DoNotDisturbRejection, HTTP 409)" });
  });

  it('an answer with no recipient is permanent and names the summary when it is a code word', async () => {
    const result = await sendAgainst((_req, res) => json(res, 201, { SMSMessageData: { Message: 'InvalidSenderId', Recipients: [] } }));
    assert.deepEqual(result, { kind: 'permanent', reason: "Africa's Talking sent to no recipient: InvalidSenderId (HTTP 201)" });
    const echoing = await sendAgainst((_req, res) => json(res, 400, { SMSMessageData: { Message: `Invalid phone number ${sms.to}`, Recipients: [] } }));
    assert.deepEqual(echoing, { kind: 'permanent', reason: "Africa's Talking refused the message (HTTP 400)" });
  });

  it('an accepted code without a message id is permanent (it may have been taken)', async () => {
    const result = await sendAgainst((_req, res) => json(res, 201, answerFor(101, 'Success', '')));
    assert.equal(result.kind, 'permanent');
  });

  it('401 (plain text, as Africa\'s Talking answers a bad key) is permanent: the credentials; one warning without the key', async () => {
    const context = recordingContext(callbackUrl);
    const result = await sendAgainst((_req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('The supplied authentication is invalid');
    }, { context });
    assert.deepEqual(result, {
      kind: 'permanent',
      reason: "Africa's Talking refused the credentials (AFRICASTALKING_USERNAME / AFRICASTALKING_API_KEY; HTTP 401)",
    });
    assert.equal(context.lines.length, 1);
    assertLogsHide(context.lines, [apiKey]);
  });

  it('429 is transient with Retry-After; 500 and 503 are transient', async () => {
    const throttled = await sendAgainst((_req, res) => {
      res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '12' });
      res.end('Too Many Requests');
    });
    assert.deepEqual(throttled, { kind: 'transient', reason: "Africa's Talking: throttled (HTTP 429)", retryAfterSeconds: 12 });
    for (const status of [500, 503]) {
      const result = await sendAgainst((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/html' });
        res.end('<html>error</html>');
      });
      assert.deepEqual(result, { kind: 'transient', reason: `Africa's Talking: server error (HTTP ${status})` });
    }
  });

  it('no answer before the caller aborts: transient, promptly', async () => {
    await assertTimesOutPromptly((signal) => sendAgainst(noAnswer, { signal }), "Africa's Talking: no answer before the time-out");
  });

  it('a connection closed mid-answer, reset before any answer, or refused is transient', async () => {
    const midway = await sendAgainst(closedMidAnswer(201, '{"SMSMessageData":{"Recipients":[{"statusCode":10'));
    assert.equal(midway.kind, 'transient', JSON.stringify(midway));
    const reset = await sendAgainst(resetBeforeAnswer);
    assert.equal(reset.kind, 'transient', JSON.stringify(reset));
    const refused = await sendAgainst(noAnswer, { raw: { AFRICASTALKING_BASE_URL: await refusedUrl() } });
    assert.match(refused.kind === 'transient' ? refused.reason : '', /ECONNREFUSED/);
  });

  it('stop() lets a send in flight end first', async () => {
    server.handler = delayed((_req, res) => json(res, 201, answerFor(101, 'Success')));
    assert.equal((await sendThroughStop(createAfricasTalking({ AFRICASTALKING_BASE_URL: server.url }), sms)).kind, 'accepted');
  });
});

describe('africastalking settings', () => {
  const { settings } = africastalkingSms;
  it('names, defaults and secrecy', () => {
    assertModuleDeclares(africastalkingSms, { name: 'africastalking', channels: ['sms'], callbacks: true });
    assert.equal(settings.AFRICASTALKING_BASE_URL.default, 'https://api.africastalking.com');
    assert.deepEqual(settings.AFRICASTALKING_BASE_URL.parse('https://api.sandbox.africastalking.com'), { origin: 'https://api.sandbox.africastalking.com', pathPrefix: '' });
    assert.equal(settings.AFRICASTALKING_USERNAME.required && settings.AFRICASTALKING_API_KEY.required && settings.AFRICASTALKING_CALLBACK_SECRET.required, true);
    assert.equal(settings.AFRICASTALKING_SENDER_ID.required || settings.AFRICASTALKING_BASE_URL.required, false);
    assert.equal(settings.AFRICASTALKING_API_KEY.secret && settings.AFRICASTALKING_CALLBACK_SECRET.secret, true);
  });
  it('refuses what cannot work, without printing a secret', () => {
    assert.throws(() => settings.AFRICASTALKING_USERNAME.parse('my app'), /username/);
    assert.throws(() => settings.AFRICASTALKING_BASE_URL.parse('api.africastalking.com'), /http\(s\)/);
    assert.throws(() => settings.AFRICASTALKING_SENDER_ID.parse('A_VERY_LONG_SENDER'), /at most 11/);
    assert.equal(settings.AFRICASTALKING_SENDER_ID.parse('20880'), '20880');
    for (const bad of ['atsk 123456789abcdef', 'k3y9']) {
      assert.throws(() => settings.AFRICASTALKING_API_KEY.parse(bad), (err: Error) => !err.message.includes(bad));
    }
    for (const bad of [secret.slice(0, 31), `${secret}/`, `${secret}?`]) {
      assert.throws(() => settings.AFRICASTALKING_CALLBACK_SECRET.parse(bad), (err: Error) => !err.message.includes(bad) && !err.message.includes(secret));
    }
  });
});

describe('africastalking delivery reports (secret in the dashboard callback path)', () => {
  const provider = createAfricasTalking({});
  after(() => provider.stop());
  const verify = (request: CallbackRequest) => {
    assert.ok(provider.verifyCallback);
    return provider.verifyCallback(request);
  };
  const callback = (form: Record<string, string>, url = `${callbackUrl}/${secret}`, contentType = 'application/x-www-form-urlencoded'): CallbackRequest => ({
    method: 'POST',
    url,
    headers: { 'content-type': contentType },
    rawBody: Buffer.from(new URLSearchParams(form).toString()),
  });
  const report = { id: 'ATXid_4a1b2c3d4e5f', status: 'Failed', phoneNumber: sms.to, networkCode: '63902', failureReason: 'UserInBlackList', retryCount: '0' };

  it('reads a documented report on the secret URL', () => {
    assert.deepEqual(verify(callback(report)), {
      kind: 'receipts',
      receipts: [{ messageId: report.id, status: 'UNDELIVERED', detail: 'Failed (UserInBlackList)', at: null }],
    });
  });

  it('maps every status, and ignores one it does not know', () => {
    const expected: Record<string, string> = {
      Sent: 'SENT', Submitted: 'SENT', Buffered: 'SENT', Success: 'DELIVERED',
      Rejected: 'UNDELIVERED', Failed: 'UNDELIVERED', AbsentSubscriber: 'UNDELIVERED', Expired: 'UNDELIVERED',
    };
    for (const [status, ours] of Object.entries(expected)) {
      const result = verify(callback({ id: report.id, status, phoneNumber: sms.to, networkCode: '63902' }));
      assert.deepEqual(result, { kind: 'receipts', receipts: [{ messageId: report.id, status: ours, detail: status, at: null }] }, status);
    }
    assert.deepEqual(verify(callback({ id: report.id, status: 'Teleported' })), { kind: 'receipts', receipts: [] });
  });

  it('forbids a missing, wrong, partial or misplaced secret, without saying it', () => {
    const urls = [
      callbackUrl,
      `${callbackUrl}/`,
      `${callbackUrl}/${secret.slice(1)}`,
      `${callbackUrl}/${secret}0`,
      `${callbackUrl}/${secret}/x`,
      `${callbackUrl}?s=${secret}`,
      `${callbackUrl}/${secret.toLowerCase()}`,
    ];
    for (const url of urls) {
      const result = verify(callback(report, url));
      assert.equal(result.kind, 'forbidden', url);
      assert.ok(result.kind === 'forbidden' && !result.reason.includes(secret));
    }
    const other = createAfricasTalking({ AFRICASTALKING_CALLBACK_SECRET: 'another-secret-0123456789abcdefghij' });
    assert.equal(other.verifyCallback?.(callback(report)).kind, 'forbidden');
    void other.stop();
  });

  it('forbids a malformed report, JSON, or another method', () => {
    assert.equal(verify(callback({ status: 'Success' })).kind, 'forbidden');
    assert.equal(verify(callback({ id: report.id })).kind, 'forbidden');
    assert.equal(verify(callback({ id: '', status: 'Success' })).kind, 'forbidden');
    assert.equal(verify({ ...callback(report), rawBody: Buffer.from(JSON.stringify(report)), headers: { 'content-type': 'application/json' } }).kind, 'forbidden');
    assert.equal(verify({ ...callback(report), method: 'GET' }).kind, 'forbidden');
  });
});
