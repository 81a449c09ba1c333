import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Provider from 'oidc-provider';
import { loadConfig } from '../../src/config.js';
import { createVerification, e164Of, eventKinds, nextLocalNumber, settlesWithin, type RecordBody } from '../support/api.js';
import { camaraNumberVerificationSpec, startCamaraPrism } from '../support/camara-spec.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import type { PrismMock } from '../support/prism.js';

const publicBase = 'https://otp.example.test';
const clientId = 'otp-service';
const clientSecret = 'camara-client-secret-0123456789abcdef';
const purpose = 'dpv:FraudPreventionAndDetection#number-verification-verify-read';
const hook = 'https://hooks.example.test/silent';
/** Number Verification's server URL under CAMARA_BASE_URL, as its description gives it. */
const verifyBase = '/number-verification/v2';

interface Silent extends Omit<RecordBody, 'otp'> {
  otp: string | null;
  checkUrl?: string;
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

/**
 * The operator's side: panva's oidc-provider as its authorization server (authorization code with PKCE, the client
 * authenticated by client_secret_basic), whose interaction step stands for the network recognising the device: it
 * logs in the device's number, or, for a device it cannot see (on Wi-Fi), answers access_denied. Number
 * Verification's verify operation is served beside it by Prism with CAMARA's published description
 * (test/peers/camara/number-verification.yaml), which refuses any request the description does not allow; in front
 * of it, the operator's part: the answer follows the access token's account, the number the network saw for the
 * device.
 */
async function startOperator(prism: PrismMock) {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const provider = new Provider(url, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${publicBase}/silent/camara/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', purpose],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    cookies: { keys: ['operator-cookie-key-0123456789'] },
  });
  provider.on('server_error', (_ctx, err) => process.stderr.write(`oidc-provider server_error: ${String(err)}\n`));
  const state = {
    /** The number the network sees for the device; null: it cannot see it (the device is on Wi-Fi). */
    device: null as string | null,
    verifyCalls: [] as { authorization: string | undefined; body: { phoneNumber?: string }; correlator: string | undefined; path: string }[],
    /** Prism's status for each verify call. */
    prismStatuses: [] as number[],
    /** What went wrong on the operator's side, asserted empty after each suite. */
    problems: [] as string[],
    tokenAuth: [] as (string | undefined)[],
  };
  /**
   * Number Verification's verify: the access token must be one this authorization server issued (an operator
   * answers from the token's account, the number the network saw); Prism, serving the published description,
   * checks the request and gives the documented answer picked here: VERIFIED when the number asked is the
   * token's, NOT_VERIFIED otherwise, its 401 for a token it never issued.
   */
  const verify = async (req: http.IncomingMessage, res: http.ServerResponse, text: string) => {
    const path = req.url ?? '';
    const authorization = req.headers.authorization;
    const correlator = req.headers['x-correlator'] as string | undefined;
    let body: { phoneNumber?: string } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      state.problems.push(`verify: a body that is not JSON: ${text}`);
    }
    state.verifyCalls.push({ authorization, body, correlator, path });
    // Prism serves the description's paths at its root: `{apiRoot}/number-verification/v2` is the server URL.
    if (path !== `${verifyBase}/verify`) state.problems.push(`verify: ${path} is not ${verifyBase}/verify`);
    const token = authorization?.startsWith('Bearer ') ? await provider.AccessToken.find(authorization.slice(7)) : undefined;
    const prefer = !token?.accountId ? 'code=401' : `example=${body.phoneNumber === token.accountId ? 'VERIFIED' : 'NOT_VERIFIED'}`;
    const headers: Record<string, string> = { prefer };
    for (const name of ['authorization', 'content-type', 'accept', 'x-correlator'] as const) {
      if (req.headers[name] !== undefined) headers[name] = String(req.headers[name]);
    }
    const answered = await fetch(`${prism.url}${path.slice(verifyBase.length)}`, { method: 'POST', headers, body: text });
    const answer = await answered.text();
    const expected = token?.accountId ? 200 : 401;
    if (answered.status !== expected) state.problems.push(`verify: Prism answered ${answered.status} (not ${expected}): ${answer}`);
    state.prismStatuses.push(answered.status);
    res.writeHead(answered.status, { 'content-type': answered.headers.get('content-type') ?? 'application/json' }).end(answer);
  };
  const callback = provider.callback();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = req.url ?? '';
    if (path.startsWith('/interaction/')) {
      void (async () => {
        const details = await provider.interactionDetails(req, res);
        if (state.device === null) {
          await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the device is not on the mobile network' }, { mergeWithLastSubmission: false });
          return;
        }
        const grant = new provider.Grant({ accountId: state.device, clientId: String(details.params.client_id) });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId: state.device }, consent: { grantId } }, { mergeWithLastSubmission: false });
      })().catch((err: unknown) => res.writeHead(500).end(String(err)));
      return;
    }
    if (path.startsWith(verifyBase) && req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void verify(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: unknown) => res.writeHead(502).end(String(err)));
      });
      return;
    }
    if (path === '/token') state.tokenAuth.push(req.headers.authorization);
    void callback(req, res);
  });
  return {
    url,
    state,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The device's browser: follows the operator's redirects, with its cookies, to the address it is sent back to. */
async function deviceFollows(start: string): Promise<string> {
  const cookies = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 10; hop += 1) {
    if (url.startsWith(publicBase)) return url;
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const set of res.headers.getSetCookie()) {
      const [pair = ''] = set.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    await res.arrayBuffer();
    const location = res.headers.get('location');
    assert.ok(location, `no redirect from ${url} (${res.status})`);
    url = new URL(location, url).toString();
  }
  assert.fail('too many redirects');
}

/**
 * Prism serving Number Verification with a named example of each answer added to verify's 200 (the published
 * description has none; its schemas are left as published), picked per call with `Prefer: example=NAME`.
 */
let prism: PrismMock;
before(async () => {
  prism = await startCamaraPrism(camaraNumberVerificationSpec, '/verify', {
    VERIFIED: { devicePhoneNumberVerified: true },
    NOT_VERIFIED: { devicePhoneNumberVerified: false },
  });
});
after(async () => {
  await prism.stop();
});

describe('Number Verification as Prism serves it', () => {
  const post = (headers: Record<string, string>, body: unknown) =>
    fetch(`${prism.url}/verify`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'example=VERIFIED', ...headers }, body: JSON.stringify(body) });
  it("refuses what the description does not allow, so that the service's accepted calls mean something", async () => {
    const bearer = { authorization: 'Bearer some-token' };
    assert.equal((await post(bearer, { phoneNumber: '+2348031234567' })).status, 200);
    assert.equal((await post({}, { phoneNumber: '+2348031234567' })).status, 401, 'no bearer token');
    assert.equal((await post(bearer, { phoneNumber: '08031234567' })).status, 400, "not E.164 (the description's 400: it has no 422)");
    assert.equal((await post(bearer, {})).status, 400, 'neither phoneNumber nor hashedPhoneNumber');
    assert.equal((await post(bearer, { phoneNumber: '+2348031234567', hashedPhoneNumber: 'a'.repeat(64) })).status, 400, 'both');
    assert.equal((await post({ ...bearer, 'x-correlator': 'no spaces allowed' }, { phoneNumber: '+2348031234567' })).status, 400, 'x-correlator');
  });
});

/**
 * Contract 19, SILENT with SILENT_PROVIDER=camara end to end: the device opens the check URL, goes through the
 * operator's real authorization server and comes back; the service trades the code (PKCE, client_secret_basic) and
 * asks Number Verification's verify.
 */
forEachDatabase('SILENT with CAMARA Number Verification', (kind) => {
  let operator: Awaited<ReturnType<typeof startOperator>>;
  let h: Harness;
  /** The same operator, but Number Verification never answers (held connections), PROVIDER_TIMEOUT_MS short. */
  let slow: Harness;
  let silentApi: http.Server;
  const env = (baseUrl: string) => ({
    SILENT_PROVIDER: 'camara',
    SMS_PROVIDER: 'log',
    CAMARA_AUTHORIZE_URL: `${operator.url}/auth`,
    CAMARA_TOKEN_URL: `${operator.url}/token`,
    CAMARA_BASE_URL: baseUrl,
    CAMARA_CLIENT_ID: clientId,
    CAMARA_CLIENT_SECRET: clientSecret,
    PUBLIC_BASE_URL: publicBase,
  });
  before(async () => {
    operator = await startOperator(prism);
    silentApi = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silentApi.listen(0, '127.0.0.1', resolve));
    h = await createHarness(kind, { env: env(operator.url) });
    slow = await createHarness(kind, { env: { ...env(`http://127.0.0.1:${(silentApi.address() as AddressInfo).port}`), PROVIDER_TIMEOUT_MS: '300' } });
  });
  after(async () => {
    await h.close();
    await slow.close();
    await operator.close();
    silentApi.closeAllConnections();
    await new Promise<void>((resolve) => silentApi.close(() => resolve()));
    assert.deepEqual(operator.state.problems, []);
  });

  const record = async (bearer: string, id: string): Promise<Silent> => {
    await h.services.sendWorker.idle();
    const res = await h.call('GET', `/v1/otp/${id}`, bearer);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Silent }).data;
  };
  const createSilent = async (bearer: string, body: Record<string, unknown> = {}) => {
    const phoneNumber = nextLocalNumber();
    const v = (await createVerification(h, bearer, { phoneNumber, type: 'SILENT', webhookUrl: hook, ...body })) as Silent;
    return { v, e164: e164Of(phoneNumber) };
  };
  /** The device opens the check URL; the answer is the operator's authorization request. */
  const open = async (checkUrl: string): Promise<URL> => {
    const res = await h.app.inject({ method: 'GET', url: checkUrl.slice(publicBase.length) });
    assert.equal(res.statusCode, 302, res.body);
    return new URL(String(res.headers.location));
  };
  const callback = async (url: string) => {
    const res = await h.app.inject({ method: 'GET', url: url.slice(publicBase.length) });
    return { status: res.statusCode, page: res.body, type: String(res.headers['content-type']) };
  };

  describe('happy', () => {
    it("answers a check URL that sends the device to the operator, whose confirmation of the number makes it SUCCESS", async () => {
      const bearer = await h.token();
      const { v, e164 } = await createSilent(bearer);
      assert.equal(v.type, 'SILENT');
      assert.equal(v.otp, null);
      assert.equal(v.delivery.channel, 'SILENT');
      assert.equal(v.checkUrl, `${publicBase}/silent/camara/${v.id}`);
      const authorize = await open(String(v.checkUrl));
      assert.equal(`${authorize.origin}${authorize.pathname}`, `${operator.url}/auth`);
      const q = authorize.searchParams;
      assert.deepEqual(
        [q.get('response_type'), q.get('client_id'), q.get('redirect_uri'), q.get('scope'), q.get('code_challenge_method')],
        ['code', clientId, `${publicBase}/silent/camara/callback`, `openid ${purpose}`, 'S256'],
      );
      assert.match(String(q.get('code_challenge')), /^[A-Za-z0-9_-]{43}$/);
      assert.ok((q.get('state') ?? '').length > 40, 'an unguessable state');
      operator.state.device = e164;
      const back = await deviceFollows(authorize.toString());
      const answered = await callback(back);
      assert.equal(answered.status, 200);
      assert.match(answered.type, /^text\/html/);
      assert.match(answered.page, /Your number is verified/);
      const done = await record(bearer, v.id);
      assert.equal(done.status, 'SUCCESS');
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
      // The code was traded with client_secret_basic, and verify asked about the verification's number with its token.
      assert.ok(operator.state.tokenAuth.at(-1)?.startsWith('Basic '));
      const asked = operator.state.verifyCalls.at(-1);
      assert.deepEqual(asked?.body, { phoneNumber: e164 });
      assert.ok(asked?.authorization?.startsWith('Bearer '));
      assert.match(String(asked?.correlator), /^[a-zA-Z0-9-_:;.\/<>{}]{1,256}$/, 'an x-correlator as the description allows');
      assert.equal(operator.state.prismStatuses.at(-1), 200, 'Prism found the call valid');
      // A replayed callback changes nothing, and says the check is over.
      assert.match((await callback(back)).page, /This check is over/);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
      assert.match((await h.app.inject({ method: 'GET', url: `/silent/camara/${v.id}` })).body, /This check is over/);
    });
  });

  describe('errors', () => {
    it("sends the workflow's next step's code at once when the operator says the device has another number", async () => {
      const bearer = await h.token();
      const { v } = await createSilent(bearer, { fallback: ['SEND_SMS'] });
      operator.state.device = '+2348030000001';
      const answered = await callback(await deviceFollows((await open(String(v.checkUrl))).toString()));
      assert.match(answered.page, /did not confirm this phone number/);
      const stepped = await record(bearer, v.id);
      assert.equal(stepped.status, 'PENDING');
      assert.deepEqual([stepped.delivery.channel, stepped.delivery.provider], ['SMS', 'log']);
      const sms = (await h.services.messages.forVerification(v.id)).filter((m) => m.channel === 'sms');
      assert.equal(sms.length, 1);
    });

    it('is FAILED UNDELIVERABLE at once when the operator cannot see the device (Wi-Fi: access_denied) and no step is left', async () => {
      const bearer = await h.token();
      const { v } = await createSilent(bearer);
      operator.state.device = null;
      const back = await deviceFollows((await open(String(v.checkUrl))).toString());
      assert.equal(new URL(back).searchParams.get('error'), 'access_denied');
      const answered = await callback(back);
      assert.match(answered.page, /Wi-Fi/);
      const failed = await record(bearer, v.id);
      assert.deepEqual([failed.status, failed.failureReason], ['FAILED', 'UNDELIVERABLE']);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
    });

    it("fails the step, within PROVIDER_TIMEOUT_MS, when the operator's Number Verification does not answer", async () => {
      const bearer = await slow.token();
      const phoneNumber = nextLocalNumber();
      const v = (await createVerification(slow, bearer, { phoneNumber, type: 'SILENT' })) as Silent;
      const started = await slow.app.inject({ method: 'GET', url: String(v.checkUrl).slice(publicBase.length) });
      operator.state.device = e164Of(phoneNumber);
      const back = await deviceFollows(String(started.headers.location));
      const answered = await settlesWithin(slow.app.inject({ method: 'GET', url: back.slice(publicBase.length) }), 5_000, 'the callback against a silent operator');
      assert.match(answered.body, /did not answer in time/);
      const res = await slow.call('GET', `/v1/otp/${v.id}`, bearer);
      const failed = (res.json() as { data: Silent }).data;
      assert.deepEqual([failed.status, failed.failureReason], ['FAILED', 'UNDELIVERABLE']);
    });

    it('is FAILED UNDELIVERABLE when the device never came back within SILENT_TIMEOUT_SECONDS', async () => {
      const bearer = await h.token();
      const { v } = await createSilent(bearer);
      await h.services.sendWorker.idle();
      h.clock.advance(30_000);
      await h.services.deliveries.takeDueSteps();
      const failed = await record(bearer, v.id);
      assert.deepEqual([failed.status, failed.failureReason], ['FAILED', 'UNDELIVERABLE']);
      assert.match((await h.app.inject({ method: 'GET', url: `/silent/camara/${v.id}` })).body, /This check is over/);
    });
  });

  describe('security', () => {
    it('changes nothing for a forged or altered state, nor for a check URL of no verification', async () => {
      const bearer = await h.token();
      const { v, e164 } = await createSilent(bearer);
      const state = String((await open(String(v.checkUrl))).searchParams.get('state'));
      const altered = `${state.slice(0, -1)}${state.endsWith('A') ? 'B' : 'A'}`;
      for (const forged of [altered, 'made-up', `${Buffer.from(`${v.id}.x`).toString('base64url')}.${'A'.repeat(43)}`]) {
        const answered = await callback(`${publicBase}/silent/camara/callback?code=abc&state=${encodeURIComponent(forged)}`);
        assert.equal(answered.status, 400);
        assert.match(answered.page, /Nothing was changed/);
      }
      assert.equal((await callback(`${publicBase}/silent/camara/callback?error=access_denied&state=${encodeURIComponent(altered)}`)).status, 400);
      const still = await record(bearer, v.id);
      assert.deepEqual([still.status, still.delivery.channel], ['PENDING', 'SILENT']);
      assert.equal((await h.app.inject({ method: 'GET', url: '/silent/camara/00000000-0000-4000-8000-000000000000' })).statusCode, 404);
      // The page never shows the number.
      operator.state.device = e164;
      const page = (await callback(await deviceFollows((await open(String(v.checkUrl))).toString()))).page;
      assert.ok(!page.includes(e164.slice(1)));
    });
  });
});

describe('SILENT_PROVIDER=camara settings', () => {
  it('needs the CAMARA settings, its authorization endpoint and PUBLIC_BASE_URL', () => {
    assert.throws(() => loadConfig({ SILENT_PROVIDER: 'camara' }), (err: Error) => {
      for (const key of ['CAMARA_AUTHORIZE_URL', 'CAMARA_BASE_URL', 'CAMARA_TOKEN_URL', 'CAMARA_CLIENT_ID', 'CAMARA_CLIENT_SECRET', 'PUBLIC_BASE_URL']) {
        assert.match(err.message, new RegExp(key));
      }
      return true;
    });
  });
});
