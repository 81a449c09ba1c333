import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { loadConfig } from '../../src/config.js';
import { createVerification, e164Of, eventKinds, expectV1Error, nextLocalNumber, settlesWithin, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

const projectNumber = '123456789012';
const issuer = `https://fpnv.googleapis.com/projects/${projectNumber}`;
const hook = 'https://hooks.example.test/silent';

interface Silent extends Omit<RecordBody, 'otp'> {
  otp: string | null;
  counter: number;
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
  fallback: string[];
}

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/**
 * A key set served as Google serves its Firebase PNV keys: a real local HTTP server whose keys the test changes
 * (a rotation), counting its fetches; `silent` servers accept the connection and never answer.
 */
async function startJwksServer(options: { silent?: boolean } = {}) {
  const state = { keys: [] as JWK[], fetches: 0 };
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    if (options.silent) {
      held.push(res);
      return;
    }
    state.fetches += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    state,
    url: `http://127.0.0.1:${port}/v1beta/jwks`,
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Contract 19, SILENT with SILENT_PROVIDER=firebase end to end: Google's key set is a local HTTP server with keys
 * made by jose, tokens are signed by jose as Firebase signs them (ES256, the project's issuer and audience, `sub`
 * the number), and the test clock drives expiry and the silent step's time-out.
 */
forEachDatabase('SILENT with Firebase Phone Number Verification', (kind) => {
  let jwks: Awaited<ReturnType<typeof startJwksServer>>;
  let hanging: Awaited<ReturnType<typeof startJwksServer>>;
  let first: SigningKey;
  let h: Harness;
  let slow: Harness;
  const env = (url: string) => ({
    SILENT_PROVIDER: 'firebase',
    SMS_PROVIDER: 'log',
    FIREBASE_PROJECT_NUMBER: projectNumber,
    FIREBASE_PNV_JWKS_URL: url,
    // A token naming a key not held makes the set be fetched again at once (the rotation below).
    FIREBASE_PNV_JWKS_COOLDOWN_SECONDS: '0',
    OTP_MAX_ATTEMPTS: '8',
  });
  before(async () => {
    jwks = await startJwksServer();
    hanging = await startJwksServer({ silent: true });
    first = await signingKey('key-1');
    jwks.state.keys = [first.jwk];
    h = await createHarness(kind, { env: env(jwks.url) });
    slow = await createHarness(kind, { env: { ...env(hanging.url), PROVIDER_TIMEOUT_MS: '300' } });
  });
  after(async () => {
    await h.close();
    await slow.close();
    await jwks.close();
    await hanging.close();
  });

  /** A token as Firebase PNV makes one for `phoneNumber`, on the harness's clock; `claims` and `header` change it. */
  const tokenFor = async (harness: Harness, phoneNumber: string, key: SigningKey = first, change: { claims?: Record<string, unknown>; issuer?: string; audience?: string[]; expiresIn?: number } = {}) => {
    const now = Math.floor(harness.clock.now().getTime() / 1000);
    return new SignJWT({ ...change.claims })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
      .setIssuer(change.issuer ?? issuer)
      .setAudience(change.audience ?? [issuer, 'https://fpnv.googleapis.com/projects/my-project'])
      .setSubject(phoneNumber)
      .setIssuedAt(now)
      .setExpirationTime(now + (change.expiresIn ?? 3600))
      .sign(key.privateKey);
  };
  const record = async (harness: Harness, bearer: string, id: string): Promise<Silent> => {
    await harness.services.sendWorker.idle();
    const res = await harness.call('GET', `/v1/otp/${id}`, bearer);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Silent }).data;
  };
  const createSilent = async (harness: Harness, bearer: string, body: Record<string, unknown> = {}) => {
    const phoneNumber = nextLocalNumber();
    const v = (await createVerification(harness, bearer, { phoneNumber, type: 'SILENT', webhookUrl: hook, ...body })) as Silent;
    return { v, e164: e164Of(phoneNumber) };
  };
  const prove = (harness: Harness, bearer: string, id: string, token: string) => harness.call('POST', `/v1/otp/${id}/silent`, bearer, { token });

  describe('happy', () => {
    it('creates a SILENT verification that sends nothing, and a token for its number makes it SUCCESS with its webhook event', async () => {
      const bearer = await h.token();
      const { v, e164 } = await createSilent(h, bearer);
      assert.equal(v.type, 'SILENT');
      assert.equal(v.status, 'PENDING');
      assert.equal(v.otp, null);
      assert.equal(v.delivery.channel, 'SILENT');
      // Nothing went to any provider: the delivery names firebase, still QUEUED, with no send counted.
      const waiting = await record(h, bearer, v.id);
      assert.deepEqual([waiting.delivery.channel, waiting.delivery.provider, waiting.delivery.status, waiting.delivery.sends], ['SILENT', 'firebase', 'QUEUED', 0]);
      assert.equal(waiting.otp, null);
      assert.deepEqual(await h.services.messages.forVerification(v.id), []);
      const res = await prove(h, bearer, v.id, await tokenFor(h, e164));
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { status: boolean; message: string; data: Silent };
      assert.equal(body.status, true);
      assert.equal(body.data.status, 'SUCCESS');
      assert.equal(body.data.counter, 1);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
      expectV1Error(await prove(h, bearer, v.id, await tokenFor(h, e164)), 409, 'VERIFICATION_NOT_PENDING');
    });

    it('accepts a token signed by a new key once the key set is fetched again (rotation)', async () => {
      const bearer = await h.token();
      const { v: warm, e164: warmNumber } = await createSilent(h, bearer);
      assert.equal((await prove(h, bearer, warm.id, await tokenFor(h, warmNumber))).statusCode, 200);
      const fetched = jwks.state.fetches;
      const second = await signingKey('key-2');
      jwks.state.keys = [first.jwk, second.jwk];
      const { v, e164 } = await createSilent(h, bearer);
      const res = await prove(h, bearer, v.id, await tokenFor(h, e164, second));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((res.json() as { data: Silent }).data.status, 'SUCCESS');
      assert.ok(jwks.state.fetches > fetched, 'the key set was fetched again for the new key');
    });

    it("sends the workflow's next step's code at once when no proof came within SILENT_TIMEOUT_SECONDS", async () => {
      const bearer = await h.token();
      const { v } = await createSilent(h, bearer, { fallback: ['SEND_SMS'] });
      assert.deepEqual(v.fallback, ['SEND_SMS']);
      await h.services.sendWorker.idle();
      h.clock.advance(29_000);
      await h.services.deliveries.takeDueSteps();
      assert.equal((await record(h, bearer, v.id)).delivery.channel, 'SILENT', 'not before the 30 s');
      h.clock.advance(1_000);
      await h.services.deliveries.takeDueSteps();
      const stepped = await record(h, bearer, v.id);
      assert.equal(stepped.status, 'PENDING');
      assert.deepEqual([stepped.delivery.channel, stepped.delivery.provider, stepped.delivery.status], ['SMS', 'log', 'SENT']);
      assert.deepEqual(stepped.fallback, []);
      const [sms] = (await h.services.messages.forVerification(v.id)).filter((m) => m.channel === 'sms');
      assert.ok(sms, 'the SMS step sent the code');
      // The code sent is the one a verify takes, and the record shows it now that it was sent.
      assert.ok(stepped.otp !== null && sms.body.includes(stepped.otp));
      const verified = await h.call('POST', '/v1/otp/verify', bearer, { id: v.id, otp: stepped.otp });
      assert.equal(verified.statusCode, 200, verified.body);
    });

    it('is FAILED UNDELIVERABLE when no proof came in time and no step is left', async () => {
      const bearer = await h.token();
      const { v } = await createSilent(h, bearer);
      await h.services.sendWorker.idle();
      h.clock.advance(30_000);
      await h.services.deliveries.takeDueSteps();
      const failed = await record(h, bearer, v.id);
      assert.equal(failed.status, 'FAILED');
      assert.equal(failed.failureReason, 'UNDELIVERABLE');
      assert.equal(failed.delivery.status, 'FAILED');
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
      assert.deepEqual(await h.services.messages.forVerification(v.id), []);
    });
  });

  describe('errors', () => {
    it('answers 422 OTP_MISMATCH to every token that does not prove the number, each a wrong attempt, FAILED after the last', async () => {
      const bearer = await h.token();
      const { v, e164 } = await createSilent(h, bearer);
      const stranger = await signingKey(first.kid);
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
        JSON.stringify({ iss: issuer, aud: [issuer], sub: e164, exp: Math.floor(h.clock.now().getTime() / 1000) + 3600 }),
      ).toString('base64url')}.`;
      const bad: [string, string][] = [
        ['signed by a key not in the set, under its key id', await tokenFor(h, e164, stranger)],
        ['expired', await tokenFor(h, e164, first, { expiresIn: -10 })],
        ['another issuer', await tokenFor(h, e164, first, { issuer: 'https://fpnv.googleapis.com/projects/999' })],
        ['another audience', await tokenFor(h, e164, first, { audience: ['https://fpnv.googleapis.com/projects/999'] })],
        ['alg none', none],
        ['another number', await tokenFor(h, '+2348039999999')],
        ['malformed', 'not.a.jwt'],
      ];
      for (const [i, [what, token]] of bad.entries()) {
        const body = expectV1Error(await prove(h, bearer, v.id, token), 422, 'OTP_MISMATCH') as unknown as { data: Silent };
        assert.equal(body.data.counter, i + 1, what);
        assert.equal(body.data.status, 'PENDING', what);
      }
      const last = expectV1Error(await prove(h, bearer, v.id, 'still.not.it'), 422, 'OTP_MISMATCH') as unknown as { data: Silent };
      assert.deepEqual([last.data.status, last.data.failureReason, last.data.counter], ['FAILED', 'MAX_ATTEMPTS', 8]);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
      // A good token no longer changes anything.
      expectV1Error(await prove(h, bearer, v.id, await tokenFor(h, e164)), 409, 'VERIFICATION_NOT_PENDING');
    });

    it('answers 503 UNAVAILABLE, within its time-out and counting no attempt, when the key set does not answer', async () => {
      const bearer = await slow.token();
      const { v, e164 } = await createSilent(slow, bearer);
      const res = await settlesWithin(prove(slow, bearer, v.id, await tokenFor(slow, e164)), 5_000, 'the proof against a silent key set');
      expectV1Error(res, 503, 'UNAVAILABLE');
      assert.ok(res.headers['retry-after']);
      const after = await record(slow, bearer, v.id);
      assert.deepEqual([after.status, after.counter], ['PENDING', 0]);
    });

    it('takes SILENT as a workflow\'s first step only, and a token only for a SILENT verification', async () => {
      const bearer = await h.token();
      expectV1Error(await h.call('POST', '/v1/otp/request', bearer, { countryCode: '+234', phoneNumber: nextLocalNumber(), fallback: ['SILENT'] }), 400, 'VALIDATION_ERROR');
      const sms = await createVerification(h, bearer, {});
      expectV1Error(await prove(h, bearer, sms.id, 'a.b.c'), 400, 'VALIDATION_ERROR');
      expectV1Error(await prove(h, bearer, '00000000-0000-4000-8000-000000000000', 'a.b.c'), 404, 'NOT_FOUND');
    });
  });

  describe('security', () => {
    it("needs otp:verify, and another client's verification is a 404", async () => {
      const bearer = await h.token();
      const { v, e164 } = await createSilent(h, bearer);
      expectV1Error(await prove(h, await h.token(['otp:send']), v.id, await tokenFor(h, e164)), 403, 'INSUFFICIENT_SCOPE');
      expectV1Error(await prove(h, await h.token(), v.id, await tokenFor(h, e164)), 404, 'NOT_FOUND');
      expectV1Error(await prove(h, null as unknown as string, v.id, await tokenFor(h, e164)), 401, 'UNAUTHORIZED');
    });
  });
});

describe('SILENT_PROVIDER settings', () => {
  it('needs FIREBASE_PROJECT_NUMBER with firebase, names one provider, and is never log', () => {
    assert.throws(() => loadConfig({ SILENT_PROVIDER: 'firebase' }), /FIREBASE_PROJECT_NUMBER: required by the firebase provider/);
    assert.throws(() => loadConfig({ SILENT_PROVIDER: 'log', FIREBASE_PROJECT_NUMBER: projectNumber }), /SILENT_PROVIDER: unknown provider "log"/);
    assert.throws(() => loadConfig({ SILENT_PROVIDER: 'firebase', FIREBASE_PROJECT_NUMBER: 'my-project' }), /FIREBASE_PROJECT_NUMBER: must be the Firebase project number/);
    const config = loadConfig({ SILENT_PROVIDER: 'firebase', FIREBASE_PROJECT_NUMBER: projectNumber });
    assert.equal(config.SILENT_TIMEOUT_SECONDS, 30);
    assert.deepEqual(loadConfig({}).providers.silent, []);
  });
});
