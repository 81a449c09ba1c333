import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import twilio from 'twilio';
import { e164Of, eventKinds, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { TwilioVerifySpec } from '../support/twilio-verify-spec.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import type { Scope } from '../../src/domain/scopes.js';

const publicBaseUrl = 'https://verify.example.test';
const maxAttempts = 3;
const authFailureLimit = 4;

/** An answer the SDK received, validated afterwards against Twilio's description. */
interface Seen {
  method: string;
  uri: string;
  statusCode: number;
  body: string;
}

const hex = (id: string) => id.replace(/-/g, '');

/**
 * Contract 15, Twilio Verify v2: the real `twilio` package, as a Twilio user writes it, with its Verify base
 * address pointed at the service; every answer it gets (errors included) validated against Twilio's own
 * OpenAPI description of Verify v2.
 */
forEachDatabase('Twilio Verify v2 drop-in', (kind) => {
  let h: Harness;
  let base: string;
  const spec = new TwilioVerifySpec();
  const seen: Seen[] = [];

  before(async () => {
    h = await createHarness(kind, {
      env: {
        PUBLIC_BASE_URL: publicBaseUrl,
        OTP_MAX_ATTEMPTS: String(maxAttempts),
        PHONE_COOLDOWN_SECONDS: '30',
        AUTH_FAILURE_LIMIT: String(authFailureLimit),
        ALLOWED_COUNTRIES: 'NG,GH',
      },
    });
    base = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    for (const s of seen) spec.check(s.method, s.uri, s.statusCode, s.body);
    await h.close();
  });

  /** The SDK as its users construct it: account sid and auth token, plus an http client that keeps every answer. */
  const sdk = (user: string, password: string) => {
    class Recording extends twilio.RequestClient {
      override async request<TData>(opts: Parameters<twilio.RequestClient['request']>[0]) {
        const res = await super.request<TData>(opts as Parameters<twilio.RequestClient['request']>[0] & { data?: TData });
        // Checked at once, so that a failure names the test whose answer it was.
        const body = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
        spec.check(opts.method, opts.uri, res.statusCode, body);
        seen.push({ method: opts.method, uri: opts.uri, statusCode: res.statusCode, body });
        return res;
      }
    }
    const client = twilio(user, password, { httpClient: new Recording(), autoRetry: false });
    // The one change a Twilio user makes: Verify's base address.
    client.verify.baseUrl = base;
    return client;
  };
  const accountOf = (c: ClientCredentials) => `AC${hex(c.clientId)}`;
  const serviceOf = (c: ClientCredentials) => `VA${hex(c.clientId)}`;
  const newClient = async (scopes: readonly Scope[] = ['otp:send', 'otp:verify']) => {
    const c = await h.client(scopes);
    return { c, api: sdk(accountOf(c), c.clientSecret) };
  };
  const restError = async (p: Promise<unknown>): Promise<{ status: number; code?: number; message: string; moreInfo?: string }> => {
    try {
      await p;
    } catch (err) {
      assert.ok(err instanceof Error && 'status' in err, `a RestException, not ${String(err)}`);
      return err as unknown as { status: number; code?: number; message: string; moreInfo?: string };
    }
    assert.fail('expected a Twilio error');
  };
  const codeSent = async (verificationId: string): Promise<string> => {
    await h.services.sendWorker.idle();
    const [message] = await h.services.messages.forVerification(verificationId);
    assert.ok(message, 'a message went out');
    const code = /\d{6}/.exec(message.body)?.[0];
    assert.ok(code, message.body);
    return code;
  };
  const idOf = (sid: string) => {
    const x = sid.slice(2);
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
  };

  describe('happy paths, through the twilio package', () => {
    it('lists one service per client, VA + its id, with links naming PUBLIC_BASE_URL', async () => {
      const { c, api } = await newClient();
      const services = await api.verify.v2.services.list();
      assert.equal(services.length, 1);
      assert.equal(services[0]?.sid, serviceOf(c));
      assert.equal(services[0]?.accountSid, accountOf(c));
      assert.equal(services[0]?.url, `${publicBaseUrl}/v2/Services/${serviceOf(c)}`);
      const fetched = await api.verify.v2.services(serviceOf(c)).fetch();
      assert.equal(fetched.sid, serviceOf(c));
    });

    it('creates (201), fetches, and approves with the right code; the same verification reads through /v1', async () => {
      const { c, api } = await newClient();
      const to = e164Of(nextLocalNumber());
      const service = api.verify.v2.services(serviceOf(c));
      const created = await service.verifications.create({ to, channel: 'sms', locale: 'fr' });
      assert.equal(created.status, 'pending');
      assert.equal(created.to, to);
      assert.equal(created.channel, 'sms');
      assert.equal(created.valid, false);
      assert.match(created.sid, /^VE[0-9a-f]{32}$/);
      assert.equal(created.serviceSid, serviceOf(c));
      assert.equal(created.url, `${publicBaseUrl}/v2/Services/${serviceOf(c)}/Verifications/${created.sid}`);
      assert.ok(created.dateCreated instanceof Date && !Number.isNaN(created.dateCreated.getTime()));
      assert.equal(seen.at(-1)?.statusCode, 201);

      const id = idOf(created.sid);
      const token = await h.token(['otp:send', 'otp:verify'], c);
      const v1 = await h.call('GET', `/v1/otp/${id}`, token);
      assert.equal(v1.statusCode, 200, v1.body);
      assert.equal((v1.json() as { data: { phoneNumber: string; status: string } }).data.phoneNumber, to);

      const code = await codeSent(id);
      const fetched = await service.verifications(created.sid).fetch();
      assert.equal(fetched.status, 'pending');
      const wrong = await service.verificationChecks.create({ to, code: code === '000000' ? '111111' : '000000' });
      assert.equal(wrong.status, 'pending');
      assert.equal(wrong.valid, false);
      const right = await service.verificationChecks.create({ to, code });
      assert.equal(right.status, 'approved');
      assert.equal(right.valid, true);
      assert.equal(right.sid, created.sid);
      assert.equal((await service.verifications(created.sid).fetch()).status, 'approved');
      const after = (await h.call('GET', `/v1/otp/${id}`, token)).json() as { data: { status: string; counter: number } };
      assert.deepEqual({ status: after.data.status, counter: after.data.counter }, { status: 'SUCCESS', counter: 2 });
      assert.deepEqual(await eventKinds(h, id), ['action.otp.success'], 'the same event as a /v1 verify');
    });

    it('checks by VerificationSid', async () => {
      const { c, api } = await newClient();
      const service = api.verify.v2.services(serviceOf(c));
      const created = await service.verifications.create({ to: e164Of(nextLocalNumber()), channel: 'sms' });
      const code = await codeSent(idOf(created.sid));
      const check = await service.verificationChecks.create({ verificationSid: created.sid, code });
      assert.equal(check.status, 'approved');
    });

    it('cancels (Status=canceled): FAILED CANCELED through /v1; a second update is 20404', async () => {
      const { c, api } = await newClient();
      const service = api.verify.v2.services(serviceOf(c));
      const created = await service.verifications.create({ to: e164Of(nextLocalNumber()), channel: 'sms' });
      const canceled = await service.verifications(created.sid).update({ status: 'canceled' });
      assert.equal(canceled.status, 'canceled');
      const token = await h.token(['otp:send'], c);
      const v1 = (await h.call('GET', `/v1/otp/${idOf(created.sid)}`, token)).json() as { data: { status: string; failureReason: string } };
      assert.deepEqual({ status: v1.data.status, reason: v1.data.failureReason }, { status: 'FAILED', reason: 'CANCELED' });
      const again = await restError(service.verifications(created.sid).update({ status: 'canceled' }));
      assert.deepEqual({ status: again.status, code: again.code }, { status: 404, code: 20404 });
    });

    it('approves without a code (Status=approved)', async () => {
      const { c, api } = await newClient();
      const service = api.verify.v2.services(serviceOf(c));
      const created = await service.verifications.create({ to: e164Of(nextLocalNumber()), channel: 'sms' });
      const approved = await service.verifications(created.sid).update({ status: 'approved' });
      assert.equal(approved.status, 'approved');
      assert.equal(approved.valid, true);
    });

    it('a wrong code on the last attempt answers max_attempts_reached, and any check after it is 60202 (429)', async () => {
      const { c, api } = await newClient();
      const to = e164Of(nextLocalNumber());
      const service = api.verify.v2.services(serviceOf(c));
      // An older verification of the number, still pending: a check by To must never slide to it.
      const older = await service.verifications.create({ to, channel: 'sms' });
      const olderCode = await codeSent(idOf(older.sid));
      h.clock.advance(31_000);
      const created = await service.verifications.create({ to, channel: 'sms' });
      const code = await codeSent(idOf(created.sid));
      const wrong = [code, olderCode].includes('000000') ? ([code, olderCode].includes('111111') ? '222222' : '111111') : '000000';
      for (let i = 1; i < maxAttempts; i++) assert.equal((await service.verificationChecks.create({ to, code: wrong })).status, 'pending');
      assert.equal((await service.verificationChecks.create({ to, code: wrong })).status, 'max_attempts_reached');
      const after = await restError(service.verificationChecks.create({ to, code }));
      assert.deepEqual({ status: after.status, code: after.code }, { status: 429, code: 60202 });
      const slid = await restError(service.verificationChecks.create({ to, code: olderCode }));
      assert.deepEqual({ status: slid.status, code: slid.code }, { status: 429, code: 60202 }, 'the older code is not checked by To');
      assert.equal((await service.verifications(created.sid).fetch()).status, 'max_attempts_reached');
      assert.equal((await service.verifications(older.sid).fetch()).status, 'pending');
    });
  });

  describe('errors, in Twilio\'s shape and codes', () => {
    it('wrong credentials are 20003 (401), by account sid or by client id', async () => {
      const { c } = await newClient();
      const wrong = await restError(sdk(accountOf(c), 'cs_wrong').verify.v2.services.list());
      assert.deepEqual({ status: wrong.status, code: wrong.code }, { status: 401, code: 20003 });
      assert.match(wrong.moreInfo ?? '', /^https:\/\//);
      const raw = await fetch(`${base}/v2/Services`, { headers: { authorization: `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}` } });
      assert.equal(raw.status, 200, 'the client id works as the user too');
      const none = await fetch(`${base}/v2/Services`);
      assert.equal(none.status, 401);
      const body = await none.text();
      seen.push({ method: 'GET', uri: `${base}/v2/Services`, statusCode: 401, body });
      assert.equal((JSON.parse(body) as { code: number }).code, 20003);
    });

    it('repeated failed authentication is slowed down as at the token endpoint (20429), the right secret included', async () => {
      const { c } = await newClient();
      for (let i = 0; i < authFailureLimit; i++) {
        assert.equal((await restError(sdk(accountOf(c), `cs_wrong${i}`).verify.v2.services.list())).status, 401);
      }
      const slowed = await restError(sdk(accountOf(c), c.clientSecret).verify.v2.services.list());
      assert.deepEqual({ status: slowed.status, code: slowed.code }, { status: 429, code: 20429 });
      // The token endpoint counts the same failures.
      const token = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret },
        remoteAddress: '127.0.0.1',
      });
      assert.equal(token.statusCode, 429, token.body);
    });

    it('another client\'s service, another client\'s verification and an unknown sid are 20404 (404)', async () => {
      const a = await newClient();
      const b = await newClient();
      const created = await a.api.verify.v2.services(serviceOf(a.c)).verifications.create({ to: e164Of(nextLocalNumber()), channel: 'sms' });
      const otherService = await restError(b.api.verify.v2.services(serviceOf(a.c)).verifications.create({ to: e164Of(nextLocalNumber()), channel: 'sms' }));
      assert.deepEqual({ status: otherService.status, code: otherService.code }, { status: 404, code: 20404 });
      const otherVerification = await restError(b.api.verify.v2.services(serviceOf(b.c)).verifications(created.sid).fetch());
      assert.deepEqual({ status: otherVerification.status, code: otherVerification.code }, { status: 404, code: 20404 });
      const check = await restError(b.api.verify.v2.services(serviceOf(b.c)).verificationChecks.create({ verificationSid: created.sid, code: '123456' }));
      assert.equal(check.code, 20404);
      const unknown = await restError(a.api.verify.v2.services(serviceOf(a.c)).verifications(`VE${'0'.repeat(32)}`).fetch());
      assert.equal(unknown.code, 20404);
      const malformed = await restError(a.api.verify.v2.services(serviceOf(a.c)).verifications('VEnot-a-sid').fetch());
      assert.equal(malformed.code, 20404);
      const noneByNumber = await restError(a.api.verify.v2.services(serviceOf(a.c)).verificationChecks.create({ to: e164Of(nextLocalNumber()), code: '123456' }));
      assert.equal(noneByNumber.code, 20404);
    });

    it('invalid parameters are 60200 (400): a number not in E.164, an unknown channel, a missing code', async () => {
      const { c, api } = await newClient();
      const service = api.verify.v2.services(serviceOf(c));
      for (const params of [
        { to: nextLocalNumber(), channel: 'sms' },
        { to: '+99912345', channel: 'sms' },
        // Exactly `+` and digits: a control character, a space or a dash after a valid number is refused.
        { to: `${e164Of(nextLocalNumber())}\u0000`, channel: 'sms' },
        { to: `${e164Of(nextLocalNumber())} `, channel: 'sms' },
        { to: e164Of(nextLocalNumber()).replace(/^(\+\d{3})/, '$1-'), channel: 'sms' },
        { to: e164Of(nextLocalNumber()), channel: 'email' },
        { to: e164Of(nextLocalNumber()), channel: 'carrier-pigeon' },
      ]) {
        const err = await restError(service.verifications.create(params));
        assert.deepEqual({ status: err.status, code: err.code }, { status: 400, code: 60200 }, JSON.stringify(params));
      }
      const nul = await restError(service.verificationChecks.create({ to: `${e164Of(nextLocalNumber())}\u0000`, code: '123456' }));
      assert.deepEqual({ status: nul.status, code: nul.code }, { status: 400, code: 60200 });
      const noTarget = await restError(service.verificationChecks.create({ code: '123456' }));
      assert.deepEqual({ status: noTarget.status, code: noTarget.code }, { status: 400, code: 60200 });
    });

    it('a channel without a driver or provider here is 60223 (400), never sent through another channel', async () => {
      const { c, api } = await newClient();
      const service = api.verify.v2.services(serviceOf(c));
      for (const channel of ['call', 'whatsapp'] as const) {
        const type = channel === 'call' ? 'VOICE_CALL' : 'WHATSAPP';
        const offered = h.services.channels.requestTypeNamed(type) !== null;
        const to = e164Of(nextLocalNumber());
        if (offered) {
          const created = await service.verifications.create({ to, channel });
          assert.equal(created.channel, channel);
        } else {
          const err = await restError(service.verifications.create({ to, channel }));
          assert.deepEqual({ status: err.status, code: err.code }, { status: 400, code: 60223 });
        }
      }
    });

    it('the phone limit is 60203 (429), a refused destination 60410 (403), under the same limits as /v1', async () => {
      const { c, api } = await newClient();
      const service = api.verify.v2.services(serviceOf(c));
      const to = e164Of(nextLocalNumber());
      await service.verifications.create({ to, channel: 'sms' });
      const again = await restError(service.verifications.create({ to, channel: 'sms' }));
      assert.deepEqual({ status: again.status, code: again.code }, { status: 429, code: 60203 });
      // The same number through /v1 is held by the same cool-down.
      const token = await h.token(['otp:send'], c);
      assert.equal((await h.call('POST', '/v1/otp/request', token, { phoneNumber: to })).statusCode, 429);
      const blocked = await restError(service.verifications.create({ to: '+14155550123', channel: 'sms' }));
      assert.deepEqual({ status: blocked.status, code: blocked.code }, { status: 403, code: 60410 });
    });

    it('a client not registered for otp:send cannot create or cancel, nor one without otp:verify check or approve (20403)', async () => {
      const verifier = await newClient(['otp:verify']);
      const err = await restError(verifier.api.verify.v2.services(serviceOf(verifier.c)).verifications.create({ to: e164Of(nextLocalNumber()), channel: 'sms' }));
      assert.deepEqual({ status: err.status, code: err.code }, { status: 403, code: 20403 });
      const sender = await newClient(['otp:send']);
      const service = sender.api.verify.v2.services(serviceOf(sender.c));
      const created = await service.verifications.create({ to: e164Of(nextLocalNumber()), channel: 'sms' });
      const check = await restError(service.verificationChecks.create({ verificationSid: created.sid, code: '123456' }));
      assert.deepEqual({ status: check.status, code: check.code }, { status: 403, code: 20403 });
      // Status=approved is a verify without a code: otp:send alone cannot approve, and the verification stays pending.
      const approve = await restError(service.verifications(created.sid).update({ status: 'approved' }));
      assert.deepEqual({ status: approve.status, code: approve.code }, { status: 403, code: 20403 });
      assert.equal((await service.verifications(created.sid).fetch()).status, 'pending');
      const canceled = await service.verifications(created.sid).update({ status: 'canceled' });
      assert.equal(canceled.status, 'canceled', 'a cancel still takes otp:send');
    });

    it('a body that is not a form, and an unknown /v2 route, answer in Twilio\'s shape', async () => {
      const { c } = await newClient();
      const auth = { authorization: `Basic ${Buffer.from(`${accountOf(c)}:${c.clientSecret}`).toString('base64')}` };
      const json = await fetch(`${base}/v2/Services/${serviceOf(c)}/Verifications`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ To: e164Of(nextLocalNumber()), Channel: 'sms' }),
      });
      const jsonBody = await json.text();
      seen.push({ method: 'POST', uri: json.url, statusCode: json.status, body: jsonBody });
      assert.equal(json.status, 415);
      const unknown = await fetch(`${base}/v2/Services/${serviceOf(c)}/RateLimits`, { headers: auth });
      const unknownBody = await unknown.text();
      seen.push({ method: 'GET', uri: unknown.url, statusCode: unknown.status, body: unknownBody });
      assert.equal((JSON.parse(unknownBody) as { code: number }).code, 20404);
    });
  });
});
