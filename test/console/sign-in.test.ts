import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { runAudited } from '../../src/admin/audited.js';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { createVerification, eventually } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { softwarePasskey } from '../support/software-passkey.js';

const origin = 'http://console.test';
const base = { host: 'console.test' };

/** The token of an operators.create link (after the #). */
function tokenOf(link: string): string {
  const token = link.split('#')[1];
  assert.ok(token, `a link with a token: ${link}`);
  return token;
}

function cookieOf(res: LightMyRequestResponse): string {
  const set = String(res.headers['set-cookie'] ?? '');
  assert.match(set, /^otp-console=[^;]+; Path=\/; HttpOnly; SameSite=Strict/, 'an HttpOnly, SameSite=Strict session cookie');
  return set.split(';')[0] ?? '';
}

/** Contract 16: operators, sign-in, sessions, CSRF and the audit log, through the HTTP app on both databases. */
forEachDatabase('console sign-in', (kind) => {
  let h: Harness;
  let off: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { CONSOLE: 'true', AUTH_FAILURE_LIMIT: '3' } });
    off = await createHarness(kind);
  });
  after(async () => {
    await h.close();
    await off.close();
  });

  const command = (input: Parameters<typeof runAdminCommand>[1]) => runAudited(adminDeps(h.services), 'cli', input);
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url, headers: { ...base, origin, ...headers }, payload: body as object });
  const get = (url: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url, headers: { ...base, ...headers } });

  /** A new operator who has set their password: their email and a signed-in cookie and CSRF token. */
  const operator = async (email: string) => {
    const made = await command({ name: 'operators.create', email });
    assert.ok(made.ok, JSON.stringify(made));
    const link = (made.value as { link: string }).link;
    assert.match(link, /\/console\/setup#[A-Za-z0-9_-]{43}$/);
    const res = await post('/console/api/setup', { token: tokenOf(link), password: 'a long enough password' });
    assert.equal(res.statusCode, 200, res.body);
    return { email, link, cookie: cookieOf(res), csrf: (res.json() as { csrfToken: string }).csrfToken };
  };

  it('is a 404 unless CONSOLE=true', async () => {
    for (const url of ['/console', '/console/api/session', '/console/clients']) {
      const res = await off.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal((res.json() as { error: { code: string } }).error.code, 'NOT_FOUND');
    }
  });

  it('serves its page and files under a strict Content-Security-Policy, with no inline script or style', async () => {
    const res = await get('/console/clients');
    assert.equal(res.statusCode, 200);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self';/);
    assert.match(csp, /style-src 'self';/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.doesNotMatch(res.body, /<script>|<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i, 'nothing inline for the policy to refuse');
    const js = await get('/console/assets/app.js');
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    for (const bad of ['/console/assets/..%2f..%2fpackage.json', '/console/assets/nope.js', '/console/api/']) {
      assert.equal((await get(bad)).statusCode, 404, bad);
    }
  });

  it('makes an operator whose one-time link sets a password once, then signs in with it', async () => {
    const made = await command({ name: 'operators.create', email: 'Ada@Example.com' });
    assert.ok(made.ok);
    const token = tokenOf((made.value as { link: string }).link);
    const weak = await post('/console/api/setup', { token, password: 'short' });
    assert.equal(weak.statusCode, 400);
    assert.equal((weak.json() as { error: { code: string } }).error.code, 'VALIDATION_ERROR');
    const ok = await post('/console/api/setup', { token, password: 'a long enough password' });
    assert.equal(ok.statusCode, 200, ok.body);
    cookieOf(ok);
    const again = await post('/console/api/setup', { token, password: 'another long password' });
    assert.equal(again.statusCode, 400, 'the link works once');

    const wrong = await post('/console/api/sign-in', { email: 'ada@example.com', password: 'not the password' });
    assert.equal(wrong.statusCode, 401);
    const res = await post('/console/api/sign-in', { email: 'ADA@example.com ', password: 'a long enough password' });
    assert.equal(res.statusCode, 200, res.body);
    const cookie = cookieOf(res);
    const session = await get('/console/api/session', { cookie });
    assert.equal(session.statusCode, 200);
    assert.equal((session.json() as { operator: { email: string } }).operator.email, 'ada@example.com');

    const listed = await command({ name: 'operators.list' });
    assert.ok(listed.ok);
    const ada = (listed.value as { email: string; hasPassword: boolean }[]).find((o) => o.email === 'ada@example.com');
    assert.equal(ada?.hasPassword, true);
    assert.equal(JSON.stringify(listed.value).includes('scrypt'), false, 'no hash is listed');
  });

  it('gives an operator who lost their password a new one-time link', async () => {
    const op = await operator('forgetful@example.com');
    const listed = await command({ name: 'operators.list' });
    assert.ok(listed.ok);
    const id = (listed.value as { id: string; email: string }[]).find((o) => o.email === op.email)?.id ?? '';
    const earlier = await command({ name: 'operators.link', id });
    assert.ok(earlier.ok, JSON.stringify(earlier));
    const linked = await command({ name: 'operators.link', id });
    assert.ok(linked.ok, JSON.stringify(linked));
    const stale = await post('/console/api/setup', { token: tokenOf((earlier.value as { link: string }).link), password: 'an attacker password' });
    assert.equal(stale.statusCode, 400, 'a new link ends the earlier unused one');
    assert.equal((await get('/console/api/clients', { cookie: op.cookie })).statusCode, 200, 'the session works until the link is used');
    const token = tokenOf((linked.value as { link: string }).link);
    const res = await post('/console/api/setup', { token, password: 'a brand new password' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await get('/console/api/clients', { cookie: op.cookie })).statusCode, 401, "using the link ends the operator's other sessions");
    assert.equal((await get('/console/api/clients', { cookie: cookieOf(res) })).statusCode, 200, "the link user's own session works");
    assert.equal((await post('/console/api/sign-in', { email: op.email, password: 'a long enough password' })).statusCode, 401, 'the old password is gone');
    assert.equal((await post('/console/api/sign-in', { email: op.email, password: 'a brand new password' })).statusCode, 200);
    assert.equal((await command({ name: 'operators.link', id: '00000000-0000-7000-8000-000000000000' })).ok, false);
  });

  it('slows failed sign-ins down as the token endpoint does (AUTH_FAILURE_LIMIT), for that email and address only', async () => {
    const { email } = await operator('slow@example.com');
    for (let i = 0; i < 3; i += 1) assert.equal((await post('/console/api/sign-in', { email, password: `wrong ${i} guess here` })).statusCode, 401);
    const slowed = await post('/console/api/sign-in', { email, password: 'a long enough password' });
    assert.equal(slowed.statusCode, 429, 'even the right password waits');
    assert.equal((slowed.json() as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.ok(Number(slowed.headers['retry-after']) >= 1);
    const other = await operator('other@example.com');
    const res = await post('/console/api/sign-in', { email: other.email, password: 'a long enough password' });
    assert.equal(res.statusCode, 200, 'another operator is not locked out');
  });

  it('counts sign-in failures per address whatever the email, and per email across addresses; each is audited', async () => {
    const { email } = await operator('sprayed@example.com');
    const from = (remoteAddress: string, body: object) =>
      h.app.inject({ method: 'POST', url: '/console/api/sign-in', remoteAddress, headers: { ...base, origin }, payload: body });
    // One machine tries many emails (unknown ones cost it as much as known ones): 3 x AUTH_FAILURE_LIMIT, then 429.
    for (let i = 0; i < 9; i += 1) assert.equal((await from('198.51.100.7', { email: `guess${i}@example.com`, password: 'not the password' })).statusCode, 401);
    assert.equal((await from('198.51.100.7', { email, password: 'a long enough password' })).statusCode, 429, 'that address waits, whatever the email');
    assert.equal((await from('198.51.100.8', { email, password: 'a long enough password' })).statusCode, 200, 'another address does not');
    // One email guessed from many machines: AUTH_FAILURE_LIMIT in all.
    for (const last of [21, 22, 23]) assert.equal((await from(`203.0.113.${last}`, { email, password: 'still not it' })).statusCode, 401);
    assert.equal((await from('203.0.113.24', { email, password: 'a long enough password' })).statusCode, 429, 'that email waits, from anywhere');
    await h.flushCounters();
    const log = await command({ name: 'audit.list', limit: 100 });
    assert.ok(log.ok);
    const attempts = (log.value as { actor: string; action: string; target: string | null; outcome: string }[]).filter((e) => e.action === 'console.sign-in' && e.outcome !== 'ok (password)');
    assert.ok(attempts.some((e) => e.outcome === 'failed' && e.target === 'guess0@example.com from 198.51.100.7' && e.actor === 'address:198.51.100.7'));
    assert.ok(attempts.some((e) => e.outcome === 'throttled' && e.target === `${email} from 203.0.113.24`));
  });

  it('refuses a change without the CSRF token, with a wrong one, or from another origin', async () => {
    const op = await operator('csrf@example.com');
    const create = (headers: Record<string, string>) => post('/console/api/clients', { name: 'from console', scopes: ['otp:send'] }, { cookie: op.cookie, ...headers });
    for (const [why, headers] of [
      ['no token', {}],
      ['a wrong token', { 'x-csrf-token': 'A'.repeat(43) }],
      ['a foreign origin', { 'x-csrf-token': op.csrf, origin: 'https://evil.example' }],
    ] as const) {
      const res = await create(headers);
      assert.equal(res.statusCode, 403, why);
      assert.equal((res.json() as { error: { code: string } }).error.code, 'CSRF_REFUSED', why);
    }
    const signInFromElsewhere = await post('/console/api/sign-in', { email: op.email, password: 'a long enough password' }, { origin: 'https://evil.example' });
    assert.equal(signInFromElsewhere.statusCode, 403, 'no sign-in from another site either');
    const listed = await command({ name: 'clients.list' });
    assert.ok(listed.ok && !(listed.value as { name: string }[]).some((c) => c.name === 'from console'), 'nothing was created');
    const res = await create({ 'x-csrf-token': op.csrf });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((res.json() as { data: { name: string } }).data.name, 'from console');
  });

  it('refuses a session after sign-out, and every session of a disabled operator', async () => {
    const op = await operator('leaving@example.com');
    const copy = op.cookie;
    assert.equal((await get('/console/api/session', { cookie: copy })).statusCode, 200);
    const out = await post('/console/api/sign-out', {}, { cookie: op.cookie, 'x-csrf-token': op.csrf });
    assert.equal(out.statusCode, 200);
    assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
    const after = await get('/console/api/session', { cookie: copy });
    assert.equal(after.statusCode, 401, 'the copied cookie signs nobody in');
    assert.equal((after.json() as { error: { code: string } }).error.code, 'UNAUTHORIZED');

    const second = await post('/console/api/sign-in', { email: op.email, password: 'a long enough password' });
    const cookie = cookieOf(second);
    const listed = await command({ name: 'operators.list' });
    assert.ok(listed.ok);
    const id = (listed.value as { id: string; email: string }[]).find((o) => o.email === op.email)?.id ?? '';
    assert.ok((await command({ name: 'operators.disable', id })).ok);
    assert.equal((await get('/console/api/session', { cookie })).statusCode, 401);
    assert.equal((await post('/console/api/sign-in', { email: op.email, password: 'a long enough password' })).statusCode, 401);
  });

  it('ends a session after 30 idle minutes, and 12 hours after sign-in however busy', async () => {
    const op = await operator('clock@example.com');
    h.clock.advance(29 * 60_000);
    assert.equal((await get('/console/api/session', { cookie: op.cookie })).statusCode, 200, 'used within 30 minutes: kept');
    h.clock.advance(30 * 60_000);
    assert.equal((await get('/console/api/session', { cookie: op.cookie })).statusCode, 401, '30 minutes idle: ended');

    const busy = cookieOf(await post('/console/api/sign-in', { email: op.email, password: 'a long enough password' }));
    for (let t = 0; t < 12 * 60 - 25; t += 25) {
      h.clock.advance(25 * 60_000);
      assert.equal((await get('/console/api/session', { cookie: busy })).statusCode, 200, `at ${t + 25} minutes`);
    }
    h.clock.advance(25 * 60_000);
    assert.equal((await get('/console/api/session', { cookie: busy })).statusCode, 401, '12 hours after sign-in: ended');
  });

  it('writes every change to the audit log, by whom, never a secret', async () => {
    const op = await operator('audited@example.com');
    const res = await post('/console/api/clients', { name: 'audited client', scopes: ['otp:send'] }, { cookie: op.cookie, 'x-csrf-token': op.csrf });
    const clientId = (res.json() as { data: { clientId: string; clientSecret: string } }).data.clientId;
    const secret = (res.json() as { data: { clientSecret: string } }).data.clientSecret;
    const refused = await post(`/console/api/clients/${clientId}/test-numbers`, { number: 'nope', code: '123456' }, { cookie: op.cookie, 'x-csrf-token': op.csrf });
    assert.equal(refused.statusCode, 400);
    const read = await get('/console/api/clients', { cookie: op.cookie });
    assert.equal(read.statusCode, 200);
    const log = await command({ name: 'audit.list', limit: 100 });
    assert.ok(log.ok);
    const entries = log.value as { actor: string; action: string; target: string | null; outcome: string }[];
    const mine = entries.filter((e) => e.actor === 'operator:audited@example.com');
    assert.deepEqual(
      mine.map((e) => [e.action, e.target, e.outcome.split(':')[0]]).reverse(),
      [
        ['console.set-password', null, 'ok'],
        ['clients.create', clientId, 'ok'],
        ['clients.test-numbers.add', clientId, 'refused'],
      ],
      'reads are not logged',
    );
    assert.ok(entries.some((e) => e.actor === 'cli' && e.action === 'operators.create' && e.target === 'audited@example.com'));
    assert.equal(JSON.stringify(entries).includes(secret), false);
    // A settings change names the fields it changed, never their values (a CAPTCHA secret least of all).
    const captchaSecret = 'captcha-secret-0123456789';
    const updated = await command({ name: 'clients.update', id: clientId, change: { appName: 'Acme', captcha: { provider: 'turnstile', secret: captchaSecret } } });
    assert.ok(updated.ok, JSON.stringify(updated));
    const latest = await command({ name: 'audit.list', limit: 1 });
    assert.ok(latest.ok);
    const [change] = latest.value as { action: string; outcome: string }[];
    assert.deepEqual({ action: change?.action, outcome: change?.outcome }, { action: 'clients.update', outcome: 'ok: appName, captcha' });
    assert.equal(JSON.stringify(latest.value).includes(captchaSecret), false);
    const page = await get('/console/api/audit?limit=5', { cookie: op.cookie });
    assert.equal(page.statusCode, 200);
    assert.equal((page.json() as { data: unknown[] }).data.length, 5);
  });

  it('gives the CLI what the console shows: stats by provider, a verification search, the providers, a template preview', async () => {
    const c = await h.client();
    const token = await h.token(undefined, c);
    const v = await createVerification(h, token, { reference: 'order-77' });
    // The send goes out after the create's commit: its provider is recorded once the log provider took it.
    await eventually(async () => {
      const res = await h.call('GET', `/v1/otp/${v.id}`, token);
      return (res.json() as { data: { delivery: { provider: string | null } } }).data.delivery.provider === 'log';
    });
    const byProvider = await command({ name: 'stats', clientId: null, from: null, to: null, byProvider: true });
    assert.ok(byProvider.ok);
    const rows = (byProvider.value as { rows: { clientId: string; provider?: string | null; sends: number }[] }).rows.filter((r) => r.clientId === c.clientId);
    assert.deepEqual(rows.map((r) => [r.provider, r.sends]), [['log', 1]]);
    const plain = await command({ name: 'stats', clientId: null, from: null, to: null });
    assert.ok(plain.ok && !(plain.value as { rows: object[] }).rows.some((r) => 'provider' in r), 'only when asked for');
    assert.equal((await command({ name: 'stats', clientId: c.clientId, from: null, to: null, byProvider: true })).ok, false);

    for (const query of [v.id, v.phoneNumber, 'order-77']) {
      const found = await command({ name: 'verifications.find', query });
      assert.ok(found.ok);
      const lives = found.value as { id: string; deliveries: unknown[]; webhooks: unknown[]; otp?: unknown }[];
      assert.deepEqual(lives.map((l) => l.id), [v.id], query);
      assert.equal(lives[0]?.deliveries.length, 1);
      assert.equal(JSON.stringify(lives).includes(String(v.otp)), false, 'never the code');
    }
    const none = await command({ name: 'verifications.find', query: 'no-such-reference' });
    assert.ok(none.ok && (none.value as unknown[]).length === 0);

    const providers = await command({ name: 'providers.status' });
    assert.ok(providers.ok);
    const sms = (providers.value as { channel: string; provider: string; circuit: string; lastDay: { verifications: number } }[]).find((p) => p.channel === 'sms');
    assert.equal(sms?.provider, 'log');
    assert.equal(sms?.circuit, 'closed');
    assert.ok((sms?.lastDay.verifications ?? 0) >= 1);

    const preview = await command({ name: 'clients.templates.preview', id: c.clientId, locale: 'fr', template: 'Votre code : {code} ✓' });
    assert.ok(preview.ok);
    assert.equal((preview.value as { encoding: string }).encoding, 'UCS-2');
    const spoken = await command({ name: 'clients.templates.preview', id: c.clientId, locale: 'fr-ca', template: 'Bonjour, votre code est {code}. Merci', channel: 'voice' });
    assert.deepEqual(spoken, { ok: true, value: { locale: 'fr-CA', channel: 'voice', sample: `Bonjour, votre code est ${[...'9'.repeat(h.config.OTP_LENGTH)].join(', ')}. Merci` } });
    const twice = await command({ name: 'clients.templates.preview', id: c.clientId, locale: 'fr', template: '{code} {code}', channel: 'voice' });
    assert.deepEqual(twice, { ok: false, error: 'a voice template must contain {code} exactly once' });
    const shown = await command({ name: 'clients.show', id: c.clientId });
    assert.ok(shown.ok);
    const saved = (shown.value as { settings: { templates: object; voiceTemplates: object } }).settings;
    assert.deepEqual([saved.templates, saved.voiceTemplates], [{}, {}], 'a preview saves nothing');
  });

  it('passkey sign-ins begun are counted per address, and unanswered challenges go once expired', async () => {
    const begin = (remoteAddress: string) =>
      h.app.inject({ method: 'POST', url: '/console/api/passkey-sign-in/options', headers: { ...base, origin }, remoteAddress, payload: {} });
    const allowed = h.services.config.AUTH_FAILURE_LIMIT * 3;
    for (let i = 0; i < allowed; i += 1) assert.equal((await begin('203.0.113.7')).statusCode, 200);
    const over = await begin('203.0.113.7');
    assert.equal(over.statusCode, 429, over.body);
    assert.ok(Number(over.headers['retry-after']) > 0);
    assert.equal((await begin('203.0.113.8')).statusCode, 200, 'another address is not held');
    const challenges = h.services.db.db.selectFrom('operator_challenges');
    await h.services.db.db
      .insertInto('operator_challenges')
      .values({ challenge: 'expired-challenge', operator_id: null, purpose: 'sign-in', expires_at: new Date(h.clock.now().getTime() - 1) })
      .execute();
    assert.equal((await begin('203.0.113.9')).statusCode, 200);
    assert.equal((await challenges.select('challenge').where('challenge', '=', 'expired-challenge').execute()).length, 0);
    const left = await challenges.select('expires_at').execute();
    assert.ok(left.every((c) => c.expires_at.getTime() - h.clock.now().getTime() <= 5 * 60_000), 'a challenge lives 5 minutes');
  });

  it('a passkey already registered is 409, audited, and the operator keeps the one they had', async () => {
    const a = await operator('twice@example.com');
    const key = softwarePasskey();
    const headers = { cookie: a.cookie, 'x-csrf-token': a.csrf };
    const add = async () => {
      const options = (await post('/console/api/passkeys/options', {}, headers)).json() as { challenge: string; rp: { id?: string } };
      return post('/console/api/passkeys', { credential: key.register(options, origin) }, headers);
    };
    const first = await add();
    assert.equal(first.statusCode, 200, first.body);
    const again = await add();
    assert.equal(again.statusCode, 409, again.body);
    assert.equal((again.json() as { error: { code: string } }).error.code, 'PASSKEY_ALREADY_REGISTERED');
    const passkeys = (await get('/console/api/account', { cookie: a.cookie })).json<{ data: { passkeys: { id: string }[] } }>().data.passkeys;
    assert.deepEqual(passkeys.map((p) => p.id), [key.id]);
    const log = await command({ name: 'audit.list', limit: 2 });
    assert.ok(log.ok);
    assert.deepEqual(
      (log.value as { actor: string; action: string; outcome: string }[]).map((e) => [e.actor, e.action, e.outcome]),
      [
        ['operator:twice@example.com', 'console.add-passkey', 'refused: the passkey is already registered'],
        ['operator:twice@example.com', 'console.add-passkey', 'ok'],
      ],
    );
  });

  it("keeps an operator's own account theirs: another's passkey is not found, a short password and a wrong one are refused, three wrong ones slowed", async () => {
    const a = await operator('own-a@example.com');
    const b = await operator('own-b@example.com');
    const opB = await h.services.operators.list().then((all) => all.find((o) => o.email === b.email));
    assert.ok(opB);
    await h.services.db.db
      .insertInto('operator_passkeys')
      .values({ credential_id: 'b-credential', operator_id: opB.id, public_key: 'AAAA', counter: 0, transports: ['internal'], created_at: new Date() })
      .execute();
    const del = (url: string, who: typeof a) => h.app.inject({ method: 'DELETE', url, headers: { ...base, origin, cookie: who.cookie, 'x-csrf-token': who.csrf } });
    const refused = await del('/console/api/account/passkeys/b-credential', a);
    assert.equal(refused.statusCode, 404);
    const mine = await get('/console/api/account', { cookie: b.cookie });
    assert.deepEqual((mine.json() as { data: { passkeys: { id: string }[] } }).data.passkeys.map((p) => p.id), ['b-credential'], 'still there');
    assert.equal((await get('/console/api/account', { cookie: a.cookie })).json<{ data: { passkeys: unknown[] } }>().data.passkeys.length, 0, 'each sees their own');
    assert.equal((await del('/console/api/account/passkeys/b-credential', b)).statusCode, 200);

    const change = (current: string, password: string) => post('/console/api/account/password', { current, password }, { cookie: a.cookie, 'x-csrf-token': a.csrf });
    const short = await change('a long enough password', 'short');
    assert.equal(short.statusCode, 400);
    assert.match((short.json() as { message: string }).message, /12/);
    for (let i = 0; i < 3; i += 1) assert.equal((await change(`wrong ${i}`, 'another long password')).statusCode, 400);
    const slowed = await change('a long enough password', 'another long password');
    assert.equal(slowed.statusCode, 429, 'wrong current passwords count as failed sign-ins');
    assert.equal((await post('/console/api/sign-in', { email: a.email, password: 'a long enough password' })).statusCode, 429, 'sign-in too');
  });

  it('answers a route it does not know, and a bad body, in the contract\'s shape', async () => {
    const op = await operator('shape@example.com');
    const unknown = await get('/console/api/nothing-here', { cookie: op.cookie });
    assert.equal(unknown.statusCode, 404);
    const notJson = await h.app.inject({ method: 'POST', url: '/console/api/sign-in', headers: { ...base, origin, 'content-type': 'application/json' }, payload: '{' });
    assert.equal(notJson.statusCode, 400);
    assert.equal((notJson.json() as { status: boolean }).status, false);
    const missing = await post(`/console/api/clients/00000000-0000-7000-8000-000000000000/disable`, {}, { cookie: op.cookie, 'x-csrf-token': op.csrf });
    assert.equal(missing.statusCode, 404);
  });
});
