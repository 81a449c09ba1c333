import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { e164Of, nextLocalNumber, operatorCommand } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { TestClock } from '../support/clock.js';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import type { ClientHooks } from '../../src/oauth/client-service.js';

const publicBaseUrl = 'https://otp.example.test';

/**
 * Contract 15's relays: requests signed exactly as each sender signs them (Supabase Auth: the standardwebhooks
 * package, as supabase/auth does; Logto: its HTTP SMS connector's Authorization header), bad signatures refused
 * with nothing sent, and the relayed code delivered through the client's providers and counted as a send.
 */
forEachDatabase('relays for auth servers', (kind) => {
  let h: Harness;
  before(async () => {
    // Supabase's requests are signed at the real time (the standardwebhooks package reads the machine's clock).
    h = await createHarness(kind, { env: { PUBLIC_BASE_URL: publicBaseUrl, PHONE_COOLDOWN_SECONDS: '30', ALLOWED_COUNTRIES: 'NG,GH' }, clock: new TestClock(Date.now()) });
  });
  after(() => h.close());

  const admin = async (command: AdminCommand) => (await operatorCommand(h.services, command)) as ClientHooks;
  /** The client's relays, turned on. */
  const hooksOf = async (clientId: string): Promise<ClientHooks & { hookSecret: string }> => {
    const hooks = await admin({ name: 'clients.hooks', id: clientId, enable: true });
    assert.ok(hooks.hookSecret !== null);
    return { ...hooks, hookSecret: hooks.hookSecret };
  };
  const verificationCount = async () =>
    Number((await h.services.db.db.selectFrom('verifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  /** What went out to a number through the log provider (the development inbox's source). */
  const sentTo = async (e164: string) => {
    await h.services.sendWorker.idle();
    const rows = await h.services.db.db
      .selectFrom('messages')
      .innerJoin('verifications', 'verifications.id', 'messages.verification_id')
      .select(['messages.body', 'verifications.id', 'verifications.relayed'])
      .where('verifications.phone_number', '=', e164)
      .execute();
    return rows;
  };

  /** Supabase Auth's request: the hook body, signed with standardwebhooks keyed with the secret less `v1,whsec_`. */
  const supabaseRequest = (url: string, secret: string, body: object, signWith = secret, at = new Date()) => {
    const payload = JSON.stringify(body);
    const id = `msg_${randomUUID()}`;
    const signature = new Webhook(signWith.replace('v1,whsec_', '')).sign(id, at, payload);
    return {
      method: 'POST',
      url: new URL(url).pathname,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      },
      payload,
    } as const;
  };
  const supabasePost = (url: string, secret: string, body: object, signWith = secret) => h.app.inject(supabaseRequest(url, secret, body, signWith));
  const supabaseBody = (e164: string, otp: string) => ({
    user: { id: randomUUID(), aud: 'authenticated', role: 'authenticated', phone: e164.slice(1), app_metadata: {}, user_metadata: {} },
    sms: { otp, sms_type: 'otp' },
  });

  it('clients hooks prints each relay\'s address under PUBLIC_BASE_URL; viewing makes no secret, --enable makes one, the same on every call', async () => {
    const c = await h.client();
    const viewed = await admin({ name: 'clients.hooks', id: c.clientId });
    assert.equal(viewed.hookSecret, null, 'relays are off until enabled');
    assert.equal((await admin({ name: 'clients.hooks', id: c.clientId })).hookSecret, null, 'viewing again still makes none');
    const first = await hooksOf(c.clientId);
    assert.match(first.hookSecret, /^v1,whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(first.supabase, `${publicBaseUrl}/hooks/supabase/send-sms/${c.clientId}`);
    assert.equal(first.logto, `${publicBaseUrl}/hooks/logto/sms/${c.clientId}`);
    assert.equal(first.kratos, `${publicBaseUrl}/hooks/kratos/sms/${c.clientId}`);
    assert.deepEqual(await hooksOf(c.clientId), first);
    assert.deepEqual(await admin({ name: 'clients.hooks', id: c.clientId }), first);
  });

  it('conversion counts a relayed code that was delivered, since it is never verified here', async () => {
    const c = await h.client();
    const hooks = await hooksOf(c.clientId);
    const e164 = e164Of(nextLocalNumber());
    const since = new Date(h.clock.now().getTime() - 1000);
    assert.equal((await supabasePost(hooks.supabase, hooks.hookSecret, supabaseBody(e164, '654321'))).statusCode, 200);
    const [sent] = await sentTo(e164);
    assert.ok(sent);
    const verifiedOf = async () =>
      (await h.services.conversionStore.traffic(since)).filter((r) => r.regionCode === 'NG').reduce((n, r) => n + r.verified, 0);
    const before = await verifiedOf();
    // As a delivery receipt records it.
    await h.services.db.db.updateTable('verifications').set({ delivery_status: 'DELIVERED' }).where('id', '=', sent.id).execute();
    assert.equal(await verifiedOf(), before + 1);
  });

  describe('Supabase Auth Send SMS Hook', () => {
    it('delivers the given code through the client\'s provider and answers 200 {}; the code is never verified here', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const e164 = e164Of(nextLocalNumber());
      const res = await supabasePost(hooks.supabase, hooks.hookSecret, supabaseBody(e164, '482913'));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), {});
      const sent = await sentTo(e164);
      assert.equal(sent.length, 1);
      assert.match(sent[0]?.body ?? '', /482913/);
      assert.equal(sent[0]?.relayed, true);
      // The auth server checks its own code: /v1 has nothing to verify.
      const token = await h.token(['otp:verify'], c);
      const verify = await h.call('POST', '/v1/otp/verify', token, { id: sent[0]?.id, otp: '482913' });
      assert.equal(verify.statusCode, 404, verify.body);
      // No per-number cool-down: the auth server decides when to send again.
      assert.equal((await supabasePost(hooks.supabase, hooks.hookSecret, supabaseBody(e164, '111222'))).statusCode, 200);
      assert.equal((await sentTo(e164)).length, 2);
    });

    it('a bad signature, another client\'s secret or an unknown hook is 401 in Supabase\'s error shape, and nothing is sent', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const other = await hooksOf((await h.client()).clientId);
      const e164 = e164Of(nextLocalNumber());
      const before = await verificationCount();
      for (const res of [
        await supabasePost(hooks.supabase, hooks.hookSecret, supabaseBody(e164, '123456'), other.hookSecret),
        await supabasePost(`${publicBaseUrl}/hooks/supabase/send-sms/${randomUUID()}`, hooks.hookSecret, supabaseBody(e164, '123456')),
        await h.app.inject({ method: 'POST', url: new URL(hooks.supabase).pathname, headers: { 'content-type': 'application/json' }, payload: supabaseBody(e164, '123456') }),
      ]) {
        assert.equal(res.statusCode, 401, res.body);
        const body = res.json() as { error: { http_code: number; message: string } };
        assert.equal(body.error.http_code, 401);
        assert.equal(typeof body.error.message, 'string');
      }
      assert.equal(await verificationCount(), before);
    });

    it('a copy of a signed request sends nothing and is answered as the first; one dated ahead is refused', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const e164 = e164Of(nextLocalNumber());
      const request = supabaseRequest(hooks.supabase, hooks.hookSecret, supabaseBody(e164, '556677'));
      const [first, copy] = [await h.app.inject(request), await h.app.inject(request)];
      assert.deepEqual([first.statusCode, copy.statusCode, copy.json()], [200, 200, {}]);
      assert.equal((await sentTo(e164)).length, 1, 'one SMS for one signed request');
      const refusedFirst = supabaseRequest(hooks.supabase, hooks.hookSecret, supabaseBody('+14155550123', '123456'));
      const refusals = [await h.app.inject(refusedFirst), await h.app.inject(refusedFirst)];
      assert.deepEqual(refusals.map((r) => r.statusCode), [403, 403], 'a copy of a refused request is refused alike');
      const ahead = await h.app.inject(supabaseRequest(hooks.supabase, hooks.hookSecret, supabaseBody(e164, '998877'), hooks.hookSecret, new Date(Date.now() + 60_000)));
      assert.equal(ahead.statusCode, 401, ahead.body);
      assert.match((ahead.json() as { error: { message: string } }).error.message, /dated ahead/);
      assert.equal((await sentTo(e164)).length, 1);
    });

    it('a client without otp:send relays nothing: 403 in each relay\'s shape', async () => {
      const c = await h.client(['lookup:request']);
      const hooks = await hooksOf(c.clientId);
      const e164 = e164Of(nextLocalNumber());
      const supabase = await supabasePost(hooks.supabase, hooks.hookSecret, supabaseBody(e164, '123456'));
      assert.equal(supabase.statusCode, 403, supabase.body);
      assert.match((supabase.json() as { error: { message: string } }).error.message, /lacks the otp:send scope/);
      const logto = await h.app.inject({
        method: 'POST',
        url: new URL(hooks.logto).pathname,
        headers: { authorization: `Bearer ${hooks.hookSecret}`, 'content-type': 'application/json' },
        payload: { to: e164, type: 'SignIn', payload: { code: '123456' } },
      });
      assert.equal(logto.statusCode, 403, logto.body);
      assert.equal((await sentTo(e164)).length, 0);
    });

    it('a refused destination answers 403 in Supabase\'s shape, as /v1 would', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const res = await supabasePost(hooks.supabase, hooks.hookSecret, supabaseBody('+14155550123', '123456'));
      assert.equal(res.statusCode, 403, res.body);
      assert.equal((res.json() as { error: { http_code: number } }).error.http_code, 403);
    });
  });

  describe('Logto HTTP SMS connector', () => {
    /** As the connector posts: JSON { to, type, payload } with its `authorization` setting as the header. */
    const logtoPost = (url: string, authorization: string, to: string, code: string) =>
      h.app.inject({
        method: 'POST',
        url: new URL(url).pathname,
        headers: { authorization, 'content-type': 'application/json' },
        payload: { to, type: 'SignIn', payload: { code, locale: 'fr' } },
      });

    it('delivers payload.code to `to` with the whole secret as Bearer', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const e164 = e164Of(nextLocalNumber());
      const res = await logtoPost(hooks.logto, `Bearer ${hooks.hookSecret}`, e164.slice(1), '775533');
      assert.equal(res.statusCode, 204, res.body);
      const sent = await sentTo(e164);
      assert.equal(sent.length, 1);
      assert.match(sent[0]?.body ?? '', /775533/);
    });

    it('a rotated-out secret is taken 24 hours more, then refused; --disable turns every relay off; a client never enabled relays nothing', async () => {
      const c = await h.client();
      const old = await hooksOf(c.clientId);
      const rotated = await admin({ name: 'clients.rotate-hook-secret', id: c.clientId });
      assert.ok(rotated.hookSecret !== null && rotated.hookSecret !== old.hookSecret);
      const until = Date.parse(rotated.previousHookSecretExpiresAt ?? '');
      assert.equal(until - h.clock.now().getTime(), 24 * 60 * 60 * 1000);
      const send = async (secret: string) => (await logtoPost(old.logto, `Bearer ${secret}`, e164Of(nextLocalNumber()).slice(1), '246810')).statusCode;
      assert.equal(await send(old.hookSecret), 204, 'the old secret, within the 24 h');
      assert.equal(await send(rotated.hookSecret), 204, 'the new secret');
      h.clock.advance(24 * 60 * 60 * 1000 + 1000);
      assert.equal(await send(old.hookSecret), 401, 'the old secret, past the 24 h');
      assert.equal(await send(rotated.hookSecret), 204);
      assert.equal((await admin({ name: 'clients.hooks', id: c.clientId })).previousHookSecretExpiresAt, null);

      const off = await admin({ name: 'clients.hooks', id: c.clientId, disable: true });
      assert.equal(off.hookSecret, null);
      const before = await verificationCount();
      assert.equal(await send(rotated.hookSecret), 401, 'relays off');
      assert.equal(await verificationCount(), before);
      const again = await runAdminCommand(adminDeps(h.services), { name: 'clients.rotate-hook-secret', id: c.clientId });
      assert.ok(!again.ok && /relays are off.*--enable/.test(again.error), JSON.stringify(again));
      const renewed = await hooksOf(c.clientId);
      assert.notEqual(renewed.hookSecret, rotated.hookSecret, 'enabled again: a new secret, never the forgotten one');

      const never = await h.client();
      const path = new URL(old.logto).pathname.replace(c.clientId, never.clientId);
      const res = await h.app.inject({ method: 'POST', url: path, headers: { authorization: 'Bearer ', 'content-type': 'application/json' }, payload: { to: '2348030000000', payload: { code: '1' } } });
      assert.equal(res.statusCode, 401);
    });

    it('a wrong or missing Bearer is 401, and nothing is sent', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const before = await verificationCount();
      for (const authorization of ['Bearer v1,whsec_wrong', '', hooks.hookSecret]) {
        const res = await logtoPost(hooks.logto, authorization, e164Of(nextLocalNumber()).slice(1), '123456');
        assert.equal(res.statusCode, 401, res.body);
      }
      assert.equal(await verificationCount(), before);
    });
  });

  describe('Ory Kratos HTTP courier (SMS)', () => {
    /** As Kratos posts once its Jsonnet ran: api_key auth in the Authorization header. */
    const kratosPost = (url: string, authorization: string, body: object) =>
      h.app.inject({ method: 'POST', url: new URL(url).pathname, headers: { authorization, 'content-type': 'application/json' }, payload: body });

    it('delivers the flow\'s code, from template_data passed whole or from the stub body\'s top-level keys', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const a = e164Of(nextLocalNumber());
      const whole = await kratosPost(hooks.kratos, `Bearer ${hooks.hookSecret}`, {
        recipient: a,
        template_type: 'login_code_valid',
        template_data: { to: a, login_code: '246810', identity: { id: randomUUID() }, request_url: 'https://auth.example.test/self-service/login' },
      });
      assert.equal(whole.statusCode, 204, whole.body);
      assert.match((await sentTo(a))[0]?.body ?? '', /246810/);
      const b = e164Of(nextLocalNumber());
      const stub = await kratosPost(hooks.kratos, `Bearer ${hooks.hookSecret}`, {
        recipient: b,
        template_type: 'verification_code_valid',
        to: b,
        recovery_code: null,
        recovery_url: null,
        verification_url: null,
        verification_code: '135790',
        subject: null,
        body: null,
        html_body: null,
      });
      assert.equal(stub.statusCode, 204, stub.body);
      assert.match((await sentTo(b))[0]?.body ?? '', /135790/);
    });

    it('a wrong Bearer is 401 and a body without a code 400, and nothing is sent', async () => {
      const c = await h.client();
      const hooks = await hooksOf(c.clientId);
      const before = await verificationCount();
      const e164 = e164Of(nextLocalNumber());
      const wrong = await kratosPost(hooks.kratos, 'Bearer nope', { recipient: e164, template_data: { login_code: '123456' } });
      assert.equal(wrong.statusCode, 401, wrong.body);
      const empty = await kratosPost(hooks.kratos, `Bearer ${hooks.hookSecret}`, { recipient: e164, template_type: 'login_code_valid', template_data: {} });
      assert.equal(empty.statusCode, 400, empty.body);
      assert.equal(await verificationCount(), before);
    });
  });
});
