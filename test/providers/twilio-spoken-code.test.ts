import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import type { CallbackRequest, OutgoingVoice, ProviderContext } from '../../src/channels/provider-port.js';
import { twilio as twilioModule, TwilioProvider } from '../../src/providers/twilio.js';
import { spokenCodeTwiml, twilioSayLanguage } from '../../src/providers/twilio-spoken-code.js';
import { startTwilioPrism, type PrismMock } from '../support/prism.js';
import { assertLogsHide, localServer, recordingContext, replyJson as json, sendOnce, type Handler } from './support.js';

const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const callbackUrl = 'https://otp.example.org/callbacks/twilio';
const callSid = 'CA0123456789abcdef0123456789abcdef';

/** The voice call every test places: the code 412907 read three times in French. */
const voice: OutgoingVoice = {
  channel: 'voice',
  sendId: 'send-1',
  verificationId: 'ver-1',
  to: '+2348012345678',
  from: '+2349010000555',
  code: '412907',
  language: 'fr',
  sentence: 'Votre code est 4, 1, 2, 9, 0, 7.',
  repeat: 3,
};

function context(ringSeconds = 20, url: string | null = callbackUrl): ProviderContext & { lines: string[] } {
  return { ...recordingContext(url), callRingSeconds: ringSeconds };
}

function createTwilio(baseUrl: string, ctx: ProviderContext = context()): TwilioProvider {
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
    { timeoutMs: 1_000, retryDelayMs: 50 },
  );
}

/** A progress callback as Twilio posts it to `url`, signed by twilio-node's own helper. */
function progress(callStatus: string, url = `${callbackUrl}/voice`, token = authToken): CallbackRequest {
  const form: Record<string, string> = {
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: callSid,
    CallStatus: callStatus,
    CallbackSource: 'call-progress-events',
    Direction: 'outbound-api',
    From: voice.from,
    To: voice.to,
    SequenceNumber: '1',
  };
  return {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': getExpectedTwilioSignature(token, url, form) },
    rawBody: Buffer.from(new URLSearchParams(form).toString()),
  };
}

describe("twilio voice calls against Prism serving Twilio's OpenAPI description (api v2010)", () => {
  let prism: PrismMock;
  before(async () => {
    prism = await startTwilioPrism();
  });
  after(async () => {
    await prism.stop();
  });

  it('places a call Prism accepts as valid (To, From, Twiml with <Say>, Timeout, callbacks) and reads its CallSid', async () => {
    const result = await sendOnce(createTwilio(prism.url), voice);
    assert.equal(result.kind, 'accepted', `${JSON.stringify(result)}\n${prism.output()}`);
    assert.match(result.kind === 'accepted' ? result.messageId : '', /^CA[0-9a-f]{32}$/i);
  });

  it('a call Prism refuses (StatusCallback not a URI, 422) is permanent', async () => {
    const result = await sendOnce(createTwilio(prism.url, context(20, 'not a uri')), voice);
    assert.equal(result.kind, 'permanent');
    assert.match(result.kind === 'permanent' ? result.reason : '', /Twilio refused the call: HTTP 422/);
  });
});

describe('twilio voice calls against a local server', () => {
  const server = localServer();
  const { seen } = server;
  const accepted: Handler = (_req, res) => json(res, 201, { sid: callSid, status: 'queued' });

  it('posts To, From (VOICE_CALLER_NUMBER), the TwiML that reads the code, Timeout and the callbacks under /voice; logs no code', async () => {
    seen.length = 0;
    server.handler = accepted;
    const ctx = context(25);
    assert.deepEqual(await sendOnce(createTwilio(server.url, ctx), voice), { kind: 'accepted', messageId: callSid });
    const [request] = seen;
    assert.ok(request);
    assert.equal(request.url, `/2010-04-01/Accounts/${accountSid}/Calls.json`);
    const say = '<Say language="fr-FR">Votre code est 4, 1, 2, 9, 0, 7.</Say>';
    assert.deepEqual([...request.form], [
      ['To', voice.to],
      ['From', voice.from],
      ['Twiml', `<Response>${say}<Pause length="1"/>${say}<Pause length="1"/>${say}<Hangup/></Response>`],
      ['Timeout', '25'],
      ['StatusCallback', `${callbackUrl}/voice`],
      ['StatusCallbackEvent', 'initiated'],
      ['StatusCallbackEvent', 'ringing'],
      ['StatusCallbackEvent', 'answered'],
      ['StatusCallbackEvent', 'completed'],
      ['StatusCallbackMethod', 'POST'],
    ]);
    assertLogsHide(ctx.lines, [authToken, voice.code, voice.sentence]);
  });

  it('reads answered calls as DELIVERED, unanswered ones as undelivered, and never hangs up a ringing voice call', async () => {
    seen.length = 0;
    server.handler = accepted;
    const provider = createTwilio(server.url);
    const statusOf = (callStatus: string) => {
      const result = provider.verifyCallback(progress(callStatus));
      assert.equal(result.kind, 'receipts', callStatus);
      return result.kind === 'receipts' ? result.receipts.map((r) => r.status) : [];
    };
    try {
      assert.deepEqual(statusOf('initiated'), ['SENT']);
      assert.deepEqual(statusOf('ringing'), ['SENT'], 'ringing is not answered: the code was not heard yet');
      assert.deepEqual(statusOf('in-progress'), ['DELIVERED']);
      assert.deepEqual(statusOf('completed'), ['DELIVERED']);
      for (const unheard of ['busy', 'no-answer', 'failed', 'canceled']) assert.deepEqual(statusOf(unheard), ['UNDELIVERED'], unheard);
    } finally {
      await provider.stop();
    }
    assert.deepEqual(seen, [], 'no hang-up request: the call plays its TwiML to the end');
  });

  it('refuses a voice callback signed for another URL or with another token (403)', () => {
    const provider = createTwilio(server.url);
    assert.equal(provider.verifyCallback(progress('in-progress', `${callbackUrl}/voice`, 'another-token')).kind, 'forbidden');
    const signedForDroppedCalls = { ...progress('in-progress', callbackUrl), url: `${callbackUrl}/voice` };
    assert.equal(provider.verifyCallback(signedForDroppedCalls).kind, 'forbidden');
  });

  it('maps the locale to a language Twilio speaks', () => {
    assert.equal(twilioSayLanguage('en'), 'en-US');
    assert.equal(twilioSayLanguage('fr-CA'), 'fr-CA');
    assert.equal(twilioSayLanguage('pt'), 'pt-BR');
    assert.equal(twilioSayLanguage('de-AT'), 'de-DE');
    assert.match(spokenCodeTwiml({ ...voice, sentence: 'a <b> & "c"', repeat: 1 }), /a &lt;b&gt; &amp; &quot;c&quot;/);
  });
});
