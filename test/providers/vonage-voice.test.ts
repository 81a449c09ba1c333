import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jwtVerify, SignJWT } from 'jose';
import type { CallbackRequest, OutgoingVoice, ProviderContext } from '../../src/channels/provider-port.js';
import { loadConfig } from '../../src/config.js';
import { vonage, VonageProvider } from '../../src/providers/vonage.js';
import { startVonageVoicePrism } from '../support/vonage-prism.js';
import type { PrismMock } from '../support/prism.js';
import { assertLogsHide, localServer, recordingContext, replyJson as json, sendOnce } from './support.js';

const apiKey = 'abcd1234';
const signatureSecret = 'vonage-signature-secret-0123456789';
const applicationId = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const callbackUrl = 'https://otp.example.org/callbacks/vonage';
const callUuid = '63f61863-4a51-4f6b-86e1-46edebcf9356';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicKey = createPublicKey(privateKey);

const voice: OutgoingVoice = {
  channel: 'voice',
  sendId: 'send-1',
  verificationId: 'ver-1',
  to: '+2348012345678',
  from: '+2349010000555',
  code: '412907',
  language: 'pt',
  sentence: 'Seu código é 4, 1, 2, 9, 0, 7.',
  words: { before: 'Seu código é', after: '.' },
  repeat: 3,
};

function createVonage(voiceBaseUrl: string, ctx: ProviderContext = { ...recordingContext(callbackUrl), callRingSeconds: 20 }): VonageProvider {
  const { settings } = vonage;
  return new VonageProvider(
    {
      VONAGE_API_KEY: settings.VONAGE_API_KEY.parse(apiKey),
      VONAGE_API_SECRET: undefined,
      VONAGE_SIGNATURE_SECRET: settings.VONAGE_SIGNATURE_SECRET.parse(signatureSecret),
      VONAGE_SIGNATURE_METHOD: settings.VONAGE_SIGNATURE_METHOD.parse('md5hash'),
      VONAGE_BASE_URL: settings.VONAGE_BASE_URL.parse('https://rest.nexmo.com'),
      VONAGE_CURRENCY: settings.VONAGE_CURRENCY.parse('EUR'),
      VONAGE_APPLICATION_ID: settings.VONAGE_APPLICATION_ID.parse(applicationId),
      VONAGE_PRIVATE_KEY: settings.VONAGE_PRIVATE_KEY.parse(privatePem),
      VONAGE_VOICE_BASE_URL: settings.VONAGE_VOICE_BASE_URL.parse(voiceBaseUrl),
    },
    ctx,
  );
}

/**
 * A call event as Vonage posts it with signed webhooks on: JSON, `Authorization: Bearer` a JWT signed HS256 with the
 * signature secret, whose claims carry `payload_hash` (SHA-256 hex of the body), `iat`, `jti`, `iss`, `api_key` and
 * `application_id` (https://developer.vonage.com/en/getting-started/concepts/webhooks#signed-webhooks). Signed here
 * with jose, not with the code under test.
 */
async function event(
  status: string,
  options: { secret?: string; iat?: number; claims?: Record<string, unknown>; tamper?: boolean; url?: string } = {},
): Promise<CallbackRequest> {
  const body = JSON.stringify({
    from: '2349010000555',
    to: '2348012345678',
    uuid: callUuid,
    conversation_uuid: `CON-${randomUUID()}`,
    status,
    direction: 'outbound',
    timestamp: '2026-11-25T13:10:00.000Z',
  });
  const jwt = await new SignJWT({
    payload_hash: createHash('sha256').update(body).digest('hex'),
    api_key: apiKey,
    application_id: applicationId,
    ...options.claims,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer('Vonage')
    .setIssuedAt(options.iat ?? Math.floor(Date.now() / 1000))
    .setJti(randomUUID())
    .sign(new TextEncoder().encode(options.secret ?? signatureSecret));
  return {
    method: 'POST',
    url: options.url ?? `${callbackUrl}/voice`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
    rawBody: Buffer.from(options.tamper ? body.replace(status, 'answered') : body),
  };
}

describe("vonage voice calls against Prism serving Vonage's OpenAPI description of the Voice API", () => {
  let prism: PrismMock;
  before(async () => {
    prism = await startVonageVoicePrism();
  });
  after(async () => {
    await prism.stop();
  });

  it('places a call Prism accepts as valid (to, from, ncco, event_url, ringing_timer, bearer JWT) and reads its uuid', async () => {
    const result = await sendOnce(createVonage(prism.url), voice);
    assert.equal(result.kind, 'accepted', `${JSON.stringify(result)}\n${prism.output().slice(-3000)}`);
    assert.match(result.kind === 'accepted' ? result.messageId : '', /^[0-9a-f-]{36}$/);
  });

  it('a call Prism refuses (ringing_timer above its maximum of 120 s: 422) is permanent', async () => {
    const result = await sendOnce(createVonage(prism.url, { ...recordingContext(callbackUrl), callRingSeconds: 121 }), voice);
    assert.equal(result.kind, 'permanent', JSON.stringify(result));
  });
});

/** Checks every field Vonage documents for a call with an NCCO (the description types the NCCO only as objects). */
describe('vonage voice calls against a local server', () => {
  const server = localServer();
  const { seen } = server;

  it('posts the documented body with a talk action that reads the code, and a fresh RS256 JWT of the application', async () => {
    seen.length = 0;
    server.handler = (_req, res) => json(res, 201, { uuid: callUuid, status: 'started', direction: 'outbound', conversation_uuid: 'CON-1' });
    const ctx = { ...recordingContext(callbackUrl), callRingSeconds: 20 };
    assert.deepEqual(await sendOnce(createVonage(`${server.url}/proxy`, ctx), voice), { kind: 'accepted', messageId: callUuid });
    const [request] = seen;
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/proxy/v1/calls');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(request.json, {
      to: [{ type: 'phone', number: '2348012345678' }],
      from: { type: 'phone', number: '2349010000555' },
      ncco: [{ action: 'talk', text: voice.sentence, language: 'pt-BR', premium: false, loop: 3 }],
      event_url: [`${callbackUrl}/voice`],
      event_method: 'POST',
      ringing_timer: 20,
    });
    const token = /^Bearer (.+)$/.exec(String(request.headers.authorization))?.[1] ?? '';
    const { payload, protectedHeader } = await jwtVerify(token, publicKey, { algorithms: ['RS256'] });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.application_id, applicationId);
    assert.ok(typeof payload.iat === 'number' && typeof payload.exp === 'number' && payload.exp > payload.iat);
    assert.match(String(payload.jti), /^[0-9a-f-]{36}$/);
    assertLogsHide(ctx.lines, [voice.code, privatePem, signatureSecret]);
  });

  it('429 and 5xx are transient; 401 is the credentials; 400 names the invalid parameters, never Vonage\'s detail', async () => {
    const answer = async (status: number, body: object) => {
      server.handler = (_req, res) => json(res, status, body);
      return sendOnce(createVonage(server.url), voice);
    };
    assert.equal((await answer(429, {})).kind, 'transient');
    assert.equal((await answer(503, {})).kind, 'transient');
    assert.match(JSON.stringify(await answer(401, { title: 'Unauthorized' })), /VONAGE_APPLICATION_ID \/ VONAGE_PRIVATE_KEY/);
    const refused = await answer(400, { type: 'https://developer.nexmo.com/api-errors#bad-request', title: 'Bad Request', detail: `${voice.to} is bad`, invalid_parameters: [{ name: 'to', reason: 'bad' }] });
    assert.deepEqual(refused, { kind: 'permanent', reason: 'Vonage refused the call (HTTP 400; invalid: to)' });
  });
});

describe('vonage call events (signed webhooks)', () => {
  const provider = createVonage('https://api.nexmo.com');
  after(() => provider.stop());
  const statusOf = async (status: string) => {
    const result = provider.verifyCallback(await event(status));
    assert.equal(result.kind, 'receipts', JSON.stringify(result));
    return result.kind === 'receipts' ? result.receipts.map((r) => [r.messageId, r.status]) : [];
  };

  it('answered (and completed) is DELIVERED; busy, timeout, rejected, failed, unanswered, cancelled undelivered; ringing SENT', async () => {
    assert.deepEqual(await statusOf('ringing'), [[callUuid, 'SENT']]);
    assert.deepEqual(await statusOf('answered'), [[callUuid, 'DELIVERED']]);
    assert.deepEqual(await statusOf('completed'), [[callUuid, 'DELIVERED']]);
    for (const unheard of ['busy', 'timeout', 'rejected', 'failed', 'unanswered', 'cancelled']) assert.deepEqual(await statusOf(unheard), [[callUuid, 'UNDELIVERED']], unheard);
    assert.deepEqual(await statusOf('machine'), []);
  });

  it('refuses another secret, a changed body, an old token, another account or application, no token, alg none', async () => {
    const refused = async (request: CallbackRequest, why: RegExp) => {
      const result = provider.verifyCallback(request);
      assert.equal(result.kind, 'forbidden');
      assert.match(result.kind === 'forbidden' ? result.reason : '', why);
    };
    await refused(await event('answered', { secret: 'another-secret' }), /signature does not match/);
    await refused(await event('busy', { tamper: true }), /payload_hash/);
    await refused(await event('answered', { iat: Math.floor(Date.now() / 1000) - 3600 }), /iat/);
    await refused(await event('answered', { claims: { api_key: 'zzzz9999' } }), /another Vonage account/);
    await refused(await event('answered', { claims: { application_id: randomUUID() } }), /another Vonage application/);
    await refused(await event('answered', { claims: { application_id: undefined } }), /without an application_id/);
    const unsigned = await event('answered');
    await refused({ ...unsigned, headers: { 'content-type': 'application/json' } }, /no Authorization/);
    const [, claims = ''] = String(unsigned.headers.authorization).split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${claims}.`;
    await refused({ ...unsigned, headers: { authorization: `Bearer ${none}` } }, /not a signed JWT|HS256/);
  });
});

describe('vonage settings for voice', () => {
  const base = { DATA_DIR: 'memory://', PUBLIC_BASE_URL: 'https://otp.example.org', VONAGE_API_KEY: apiKey, VONAGE_SIGNATURE_SECRET: signatureSecret };
  it('needs the application id and its private key only when named for voice', () => {
    assert.deepEqual(loadConfig({ ...base, SMS_PROVIDER: 'vonage' }).providers.voice, []);
    assert.throws(
      () => loadConfig({ ...base, VOICE_PROVIDER: 'vonage' }),
      (err: Error) => /VONAGE_APPLICATION_ID: required by the vonage provider for VOICE_PROVIDER/.test(err.message) && /VONAGE_PRIVATE_KEY: required/.test(err.message),
    );
    const c = loadConfig({ ...base, VOICE_PROVIDER: 'vonage', VONAGE_APPLICATION_ID: applicationId, VONAGE_PRIVATE_KEY: privatePem.replace(/\n/g, '\\n') });
    assert.deepEqual(c.providers.voice.map((p) => p.module.name), ['vonage']);
  });
  it('refuses a private key that is not one, without repeating it', () => {
    assert.throws(() => vonage.settings.VONAGE_PRIVATE_KEY.parse('-----BEGIN PRIVATE KEY-----\nnot-a-key\n-----END PRIVATE KEY-----'), (err: Error) => !err.message.includes('not-a-key'));
    assert.throws(() => vonage.settings.VONAGE_PRIVATE_KEY.parse('/nonexistent/private.key'), /readable file/);
    assert.equal(vonage.settings.VONAGE_PRIVATE_KEY.secret, true);
  });
});
