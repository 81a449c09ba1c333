import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { exactly, sippAddress, sippMissing, startSipp, type SippRun } from '../providers/sipp.js';
import { createVerification, eventually, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import type { PrismMock } from '../support/prism.js';
import { startVonageVoicePrism } from '../support/vonage-prism.js';

interface Delivered extends RecordBody {
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

const caller = '+2348120000555';
const record = async (h: Harness, token: string, id: string): Promise<Delivered> => (await h.call('GET', `/v1/otp/${id}`, token)).json<{ data: Delivered }>().data;

/**
 * Contract 13 (`VOICE_CALL`) end to end through the API, the send worker and the sip provider, with SIPp as the
 * trunk's far end: SIPp rings, answers with an SDP naming this test's UDP socket, which receives the code's audio,
 * and takes our BYE; the record reads DELIVERED on the VOICE channel through sip.
 */
forEachDatabase('a voice call through a SIP trunk (SIPp)', (kind) => {
  const missing = sippMissing();
  let sipp: SippRun;
  let h: Harness;
  let rtp: dgram.Socket;
  let packets = 0;
  before(async () => {
    if (missing) return;
    rtp = dgram.createSocket('udp4');
    rtp.on('message', () => (packets += 1));
    await new Promise<void>((resolve) => rtp.bind(0, '127.0.0.1', () => resolve()));
    sipp = await startSipp(
      'voice-answer.xml',
      'udp',
      {
        FROM_RE: `^ *<sip:${exactly(caller)}@${exactly(sippAddress)}>;tag=[0-9a-f]+ *$`,
        PAI_RE: `^ *<sip:${exactly(caller)}@${exactly(sippAddress)}> *$`,
        RTP_IP: '127.0.0.1',
        RTP_PORT: String(rtp.address().port),
        PT: '0',
        CODEC: 'PCMU',
      },
      { timeoutSeconds: 60 },
    );
    h = await createHarness(kind, {
      env: {
        VOICE_PROVIDER: 'sip',
        VOICE_CALLER_NUMBER: caller,
        VOICE_REPEAT: '1',
        OTP_LENGTH: '4',
        SIP_TRUNK_URI: `sip:${sippAddress}:${sipp.port}`,
        SIP_LOCAL_ADDRESS: '127.0.0.1',
      },
    });
    await h.services.providers.start();
  });
  after(async () => {
    if (missing) return;
    await h.close();
    sipp.stop();
    rtp.close();
  });

  it('calls from VOICE_CALLER_NUMBER, plays the code once answered, hangs up, and records DELIVERED', { skip: missing ?? false }, async () => {
    const token = await h.token();
    const v = await createVerification(h, token, { type: 'VOICE_CALL' });
    await eventually(async () => (await record(h, token, v.id)).delivery.status === 'DELIVERED', 15_000);
    const r = await record(h, token, v.id);
    assert.deepEqual(
      { status: r.status, channel: r.delivery.channel, provider: r.delivery.provider, delivery: r.delivery.status, sends: r.delivery.sends },
      { status: 'PENDING', channel: 'VOICE', provider: 'sip', delivery: 'DELIVERED', sends: 1 },
    );
    assert.equal(await sipp.exited, 0, `SIPp's scenario (answer, ACK, BYE after the audio) did not pass: ${sipp.errors()}`);
    assert.ok(packets > 50, `the code was played (${packets} RTP packets)`);
    assert.equal(/^INVITE sip:(\+\d+)@/m.exec(sipp.messages())?.[1], v.phoneNumber);
  });
});

const apiKey = 'abcd1234';
const signatureSecret = 'vonage-signature-secret-0123456789';
const applicationId = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const publicBase = 'https://otp.example.test';

/**
 * The same through the vonage provider, against Vonage's own description of the Voice API served by Prism; the
 * call's events are posted to /callbacks/vonage/voice signed as Vonage signs webhooks (HS256, payload_hash).
 */
forEachDatabase('a voice call through vonage (Prism)', (kind) => {
  let prism: PrismMock;
  let h: Harness;
  before(async () => {
    prism = await startVonageVoicePrism();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    h = await createHarness(kind, {
      env: {
        VOICE_PROVIDER: 'vonage',
        VOICE_CALLER_NUMBER: caller,
        VONAGE_API_KEY: apiKey,
        VONAGE_SIGNATURE_SECRET: signatureSecret,
        VONAGE_APPLICATION_ID: applicationId,
        VONAGE_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        VONAGE_VOICE_BASE_URL: prism.url,
        PUBLIC_BASE_URL: publicBase,
      },
    });
  });
  after(async () => {
    await h?.close();
    await prism?.stop();
  });

  const event = async (uuid: string, status: string) => {
    const body = JSON.stringify({ uuid, conversation_uuid: `CON-${randomUUID()}`, status, direction: 'outbound', timestamp: new Date().toISOString() });
    const jwt = await new SignJWT({ payload_hash: createHash('sha256').update(body).digest('hex'), api_key: apiKey, application_id: applicationId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer('Vonage')
      .setIssuedAt()
      .setJti(randomUUID())
      .sign(new TextEncoder().encode(signatureSecret));
    return h.app.inject({ method: 'POST', url: '/callbacks/vonage/voice', headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` }, payload: body });
  };

  describe('voice', () => {
    it('places the call Prism accepts, and the signed answered event makes it DELIVERED; an unsigned one is 403', async () => {
      const token = await h.token();
      const v = await createVerification(h, token, { type: 'VOICE_CALL' });
      await h.services.sendWorker.idle();
      const row = await h.services.db.db.selectFrom('verifications').select(['delivery_message_id', 'delivery_status']).where('id', '=', v.id).executeTakeFirstOrThrow();
      assert.equal(row.delivery_status, 'SENT', prism.output().slice(-2000));
      const uuid = row.delivery_message_id ?? '';
      const unsigned = await h.app.inject({ method: 'POST', url: '/callbacks/vonage/voice', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ uuid, status: 'answered' }) });
      assert.equal(unsigned.statusCode, 403);
      assert.equal((await record(h, token, v.id)).delivery.status, 'SENT');
      const answered = await event(uuid, 'answered');
      assert.equal(answered.statusCode, 200, answered.body);
      const r = await record(h, token, v.id);
      assert.deepEqual({ channel: r.delivery.channel, provider: r.delivery.provider, status: r.delivery.status }, { channel: 'VOICE', provider: 'vonage', status: 'DELIVERED' });
    });
  });
});
