import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { e164Of, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { zitadelSignatureHeader, zitadelSmsPayload, type ZitadelSmsKind } from '../support/zitadel-sender.js';
import { parseAdminCommand, runAdminCommand } from '../../src/admin/commands.js';
import { checkZitadelSignature } from '../../src/http/relays/zitadel-signature.js';
import { adminDeps } from '../../src/admin/deps.js';
import type { ClientHooks } from '../../src/oauth/client-service.js';

const publicBaseUrl = 'https://otp.example.test';

/** A signing key as ZITADEL shows one (random text; its exact alphabet does not matter to the HMAC). */
const newKey = () => randomBytes(24).toString('base64url');

describe('ZITADEL-Signature, as pkg/actions/signing.go computes it', () => {
  // Computed outside Node: printf '1764062400.{"a":1}' | openssl dgst -sha256 -hmac 'zitadel-test-signing-key'
  const vector = {
    key: 'zitadel-test-signing-key',
    body: '{"a":1}',
    at: new Date(1764062400 * 1000),
    v1: 'cdea13082ae5ca51a5e4f3f28e2e38bb32a6952c8f648a5289ffc3d850a700b0',
  };

  it('the test sender signs the fixed vector as openssl does', () => {
    assert.equal(zitadelSignatureHeader(vector.at, vector.body, vector.key), `t=1764062400,v1=${vector.v1}`);
  });

  it('takes any one matching v1 and ignores other names; refuses stale, far-ahead, malformed and missing headers', () => {
    const at = vector.at;
    const check = (header: string | undefined, now = at) => checkZitadelSignature(header, vector.body, vector.key, now);
    assert.equal(check(`t=1764062400,v1=${vector.v1}`), 'valid');
    // Several keys (ComputeSignatureHeader's variadic signingKey): any one is enough, as ValidatePayload says.
    assert.equal(check(zitadelSignatureHeader(at, vector.body, 'another-key-entirely', vector.key)), 'valid');
    assert.equal(check(`v0=ab,t=1764062400,v1=zz,v1=${vector.v1}`), 'valid');
    assert.equal(check(`t=1764062400,v1=${vector.v1}`, new Date(at.getTime() + 300_000)), 'valid');
    assert.equal(check(`t=1764062400,v1=${vector.v1}`, new Date(at.getTime() + 301_000)), 'stale');
    assert.equal(check(`t=1764062400,v1=${vector.v1}`, new Date(at.getTime() - 301_000)), 'stale');
    // Dated ahead: 30 s of skew, no more (a request cannot be signed now to be used later).
    assert.equal(check(`t=1764062400,v1=${vector.v1}`, new Date(at.getTime() - 30_000)), 'valid');
    assert.equal(check(`t=1764062400,v1=${vector.v1}`, new Date(at.getTime() - 31_000)), 'stale');
    assert.equal(check(`t=1764062401,v1=${vector.v1}`), 'mismatch');
    assert.equal(check(`t=1764062400,v1=${vector.v1.slice(0, -2)}00`), 'mismatch');
    assert.equal(check('t=1764062400'), 'mismatch');
    assert.equal(check(`v1=${vector.v1}`), 'stale');
    assert.equal(check(`t=1764062400,v1`), 'malformed');
    assert.equal(check(`t=1764062400,v1=${vector.v1}=`), 'malformed');
    assert.equal(check(`t=soon,v1=${vector.v1}`), 'malformed');
    assert.equal(check(''), 'missing');
    assert.equal(check(undefined), 'missing');
    assert.equal(checkZitadelSignature(`t=1764062400,v1=${vector.v1}`, vector.body, 'zitadel-test-signing-keY', at), 'mismatch');
    assert.equal(checkZitadelSignature(`t=1764062400,v1=${vector.v1}`, '{"a":2}', vector.key, at), 'mismatch');
  });
});

/**
 * Contract 15's ZITADEL relay: requests signed exactly as ZITADEL's HTTP SMS provider signs them. No ZITADEL runs
 * here (a Go server with its own database): test/support/zitadel-sender.ts writes its body and signature from its
 * source, naming each file. Bad signatures are refused with nothing sent; the code goes out through the client's
 * provider (the log provider, the development inbox's source) and counts as a relayed send.
 */
forEachDatabase('ZITADEL HTTP SMS provider relay', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { PUBLIC_BASE_URL: publicBaseUrl, PHONE_COOLDOWN_SECONDS: '30', ALLOWED_COUNTRIES: 'NG,GH' } });
  });
  after(() => h.close());

  const hooksOf = async (clientId: string, zitadelSigningKey?: string | null): Promise<ClientHooks> => {
    const result = await runAdminCommand(adminDeps(h.services), { name: 'clients.hooks', id: clientId, ...(zitadelSigningKey !== undefined && { zitadelSigningKey }) });
    assert.ok(result.ok, JSON.stringify(result));
    return result.value as ClientHooks;
  };
  const verificationCount = async () =>
    Number((await h.services.db.db.selectFrom('verifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const sentTo = async (e164: string) => {
    await h.services.sendWorker.idle();
    return h.services.db.db
      .selectFrom('messages')
      .innerJoin('verifications', 'verifications.id', 'messages.verification_id')
      .select(['messages.body', 'verifications.id', 'verifications.relayed', 'verifications.client_id'])
      .where('verifications.phone_number', '=', e164)
      .execute();
  };
  const user = (phone: string) => ({ id: '289748723492837001', resourceOwner: '289748723492836001', username: `ada${randomUUID().slice(0, 8)}`, phone });

  /** ZITADEL's POST: webhook/channel.go's headers, the payload as json.Marshal writes it, signed at `at`. */
  const zitadelPost = (url: string, payload: string, signature: string | null) =>
    h.app.inject({
      method: 'POST',
      url: new URL(url).pathname,
      headers: { 'content-type': 'application/json', ...(signature !== null && { 'zitadel-signature': signature }) },
      payload,
    });
  const signedPost = (url: string, key: string, kind: ZitadelSmsKind, e164: string, code: string) => {
    const payload = zitadelSmsPayload(kind, user(e164), code);
    return zitadelPost(url, payload, zitadelSignatureHeader(h.clock.now(), payload, key));
  };

  it('clients hooks prints the ZITADEL endpoint and keeps the signing key ZITADEL made, never printing it back', async () => {
    const c = await h.client();
    const first = await hooksOf(c.clientId);
    assert.equal(first.zitadel, `${publicBaseUrl}/hooks/zitadel/sms/${c.clientId}`);
    assert.equal(first.zitadelSigningKeySet, false);
    const key = newKey();
    const given = await hooksOf(c.clientId, key);
    assert.equal(given.zitadelSigningKeySet, true);
    assert.equal(given.hookSecret, first.hookSecret);
    assert.ok(!JSON.stringify(given).includes(key));
    assert.deepEqual(await hooksOf(c.clientId), given);
    // What the admin socket takes: a key that cannot be ZITADEL's is refused before anything is stored.
    assert.equal(typeof parseAdminCommand({ name: 'clients.hooks', id: c.clientId, zitadelSigningKey: 'short' }), 'string');
    assert.deepEqual(parseAdminCommand({ name: 'clients.hooks', id: c.clientId, zitadelSigningKey: key }), { name: 'clients.hooks', id: c.clientId, zitadelSigningKey: key });
    assert.equal(typeof parseAdminCommand({ name: 'clients.hooks', id: c.clientId, disable: true, zitadelSigningKey: key }), 'string');
  });

  it('a key cleared (--zitadel-signing-key none), or the relays turned off, takes no more of ZITADEL\'s requests', async () => {
    for (const off of [{ zitadelSigningKey: null }, { disable: true }] as const) {
      const c = await h.client();
      const key = newKey();
      const hooks = await hooksOf(c.clientId, key);
      assert.equal((await signedPost(hooks.zitadel, key, 'phone-verification', e164Of(nextLocalNumber()), 'A1B2C3D4')).statusCode, 204);
      const result = await runAdminCommand(adminDeps(h.services), { name: 'clients.hooks', id: c.clientId, ...off });
      assert.ok(result.ok);
      assert.equal((result.value as ClientHooks).zitadelSigningKeySet, false);
      const before = await verificationCount();
      const refused = await signedPost(hooks.zitadel, key, 'phone-verification', e164Of(nextLocalNumber()), 'E5F6G7H8');
      assert.equal(refused.statusCode, 401, `${JSON.stringify(off)}: ${refused.body}`);
      assert.equal(await verificationCount(), before);
    }
  });

  it('delivers a phone verification code (args.code) and a one-time password (args.oTP) through the client\'s provider, 204', async () => {
    const c = await h.client();
    const key = newKey();
    const hooks = await hooksOf(c.clientId, key);
    const a = e164Of(nextLocalNumber());
    const res = await signedPost(hooks.zitadel, key, 'phone-verification', a, 'K7Q2M9XD');
    assert.equal(res.statusCode, 204, res.body);
    const sent = await sentTo(a);
    assert.equal(sent.length, 1);
    assert.match(sent[0]?.body ?? '', /K7Q2M9XD/);
    assert.equal(sent[0]?.relayed, true);
    assert.equal(sent[0]?.client_id, c.clientId);
    const b = e164Of(nextLocalNumber());
    assert.equal((await signedPost(hooks.zitadel, key, 'otp-sms', b, '48213377')).statusCode, 204);
    assert.match((await sentTo(b))[0]?.body ?? '', /48213377/);
    // No per-number cool-down: ZITADEL decides when to send again.
    assert.equal((await signedPost(hooks.zitadel, key, 'otp-sms', b, '90817263')).statusCode, 204);
    assert.equal((await sentTo(b)).length, 2);
    // The code is ZITADEL's to check: /v1 has nothing to verify.
    const token = await h.token(['otp:verify'], c);
    assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: sent[0]?.id, otp: 'K7Q2M9XD' })).statusCode, 404);
    // Counted as the client's sends, and in the inbox (the operator's `messages`).
    const stats = await runAdminCommand(adminDeps(h.services), { name: 'stats', clientId: c.clientId, from: null, to: null });
    assert.ok(stats.ok);
    const rows = (stats.value as { rows: { sends: number; regionCode: string }[] }).rows;
    assert.equal(rows.filter((r) => r.regionCode === 'NG').reduce((n, r) => n + r.sends, 0), 3);
    const inbox = await runAdminCommand(adminDeps(h.services), { name: 'messages.latest', to: b, limit: 10 });
    assert.ok(inbox.ok);
    assert.match(JSON.stringify(inbox.value), /90817263/);
  });

  it('a copy of a signed request (its signature seen before) is answered 204 and sends nothing', async () => {
    const c = await h.client();
    const key = newKey();
    const hooks = await hooksOf(c.clientId, key);
    const to = e164Of(nextLocalNumber());
    const payload = zitadelSmsPayload('otp-sms', user(to), '31415926');
    const signature = zitadelSignatureHeader(h.clock.now(), payload, key);
    assert.equal((await zitadelPost(hooks.zitadel, payload, signature)).statusCode, 204);
    assert.equal((await zitadelPost(hooks.zitadel, payload, signature)).statusCode, 204);
    assert.equal((await sentTo(to)).length, 1, 'one SMS for one signed request');
  });

  it('a wrong key, a changed body, a stale or far-ahead timestamp, no or a malformed header, an unknown hook, no key kept or a disabled client: 401, nothing sent', async () => {
    const c = await h.client();
    const key = newKey();
    const hooks = await hooksOf(c.clientId, key);
    const keyless = await hooksOf((await h.client()).clientId);
    const disabled = await h.client();
    const disabledKey = newKey();
    const disabledHooks = await hooksOf(disabled.clientId, disabledKey);
    assert.ok((await runAdminCommand(adminDeps(h.services), { name: 'clients.disable', id: disabled.clientId })).ok);
    const e164 = e164Of(nextLocalNumber());
    const payload = zitadelSmsPayload('phone-verification', user(e164), '55443322');
    const now = h.clock.now();
    const before = await verificationCount();
    const cases: [string, string, string | null][] = [
      ['another key', payload, zitadelSignatureHeader(now, payload, newKey())],
      ['a changed body', payload.replace('55443322', '55443323'), zitadelSignatureHeader(now, payload, key)],
      ['stale', payload, zitadelSignatureHeader(new Date(now.getTime() - 301_000), payload, key)],
      ['far ahead', payload, zitadelSignatureHeader(new Date(now.getTime() + 301_000), payload, key)],
      ['no header', payload, null],
      ['malformed', payload, `t=${Math.floor(now.getTime() / 1000)},v1`],
    ];
    for (const [why, body, signature] of cases) {
      const res = await zitadelPost(hooks.zitadel, body, signature);
      assert.equal(res.statusCode, 401, `${why}: ${res.body}`);
      const error = res.json() as { code: string; message: string };
      assert.equal(error.code, 'UNAUTHORIZED', why);
      assert.equal(typeof error.message, 'string');
    }
    const signed = zitadelSignatureHeader(now, payload, key);
    for (const url of [`${publicBaseUrl}/hooks/zitadel/sms/${randomUUID()}`, `${publicBaseUrl}/hooks/zitadel/sms/not-a-client`, keyless.zitadel]) {
      assert.equal((await zitadelPost(url, payload, signed)).statusCode, 401, url);
    }
    const toDisabled = await zitadelPost(disabledHooks.zitadel, payload, zitadelSignatureHeader(now, payload, disabledKey));
    assert.equal(toDisabled.statusCode, 401, toDisabled.body);
    assert.equal(await verificationCount(), before);
    assert.equal((await sentTo(e164)).length, 0);
  });

  it('a new key from ZITADEL replaces the old one at once', async () => {
    const c = await h.client();
    const old = newKey();
    const hooks = await hooksOf(c.clientId, old);
    const renewed = newKey();
    await hooksOf(c.clientId, renewed);
    assert.equal((await signedPost(hooks.zitadel, old, 'otp-sms', e164Of(nextLocalNumber()), '11223344')).statusCode, 401);
    assert.equal((await signedPost(hooks.zitadel, renewed, 'otp-sms', e164Of(nextLocalNumber()), '11223344')).statusCode, 204);
  });

  it('a message without a code is 400, a refused destination 403 as /v1 would answer, and nothing is sent', async () => {
    const c = await h.client();
    const key = newKey();
    const hooks = await hooksOf(c.clientId, key);
    const e164 = e164Of(nextLocalNumber());
    const withoutCode = zitadelSmsPayload('phone-verification', user(e164), 'X').replace(/,"code":"X"/, '');
    assert.ok(!withoutCode.includes('"code"'));
    const before = await verificationCount();
    const res = await zitadelPost(hooks.zitadel, withoutCode, zitadelSignatureHeader(h.clock.now(), withoutCode, key));
    assert.equal(res.statusCode, 400, res.body);
    assert.equal((res.json() as { code: string }).code, 'BAD_REQUEST');
    const refused = await signedPost(hooks.zitadel, key, 'otp-sms', '+14155550123', '12345678');
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal((refused.json() as { code: string }).code, 'FORBIDDEN');
    assert.equal(await verificationCount(), before);
  });
});
