import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { adminDeps } from '../../src/admin/deps.js';
import { expectV1Error, nextLocalNumber, sendCounts } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';

type Provider = 'turnstile' | 'hcaptcha' | 'recaptcha';

/**
 * No CAPTCHA provider can run here, so a local receiver stands in for each provider's siteverify and checks
 * every field that provider documents for it:
 * - Turnstile (developers.cloudflare.com/turnstile/get-started/server-side-validation): POST, form fields
 *   `secret` and `response` (required), `remoteip` (optional), `idempotency_key` (optional, not sent by us);
 *   answers `{ success, challenge_ts, hostname, "error-codes", action, cdata }`.
 * - hCaptcha (docs.hcaptcha.com/#verify-the-user-response-server-side): POST form `secret`, `response`, optional
 *   `remoteip` and `sitekey`; answers `{ success, challenge_ts, hostname, "error-codes" }` and, for Enterprise,
 *   `score`.
 * - reCAPTCHA v3 (developers.google.com/recaptcha/docs/verify): POST form `secret`, `response`, optional
 *   `remoteip`; answers `{ success, score, action, challenge_ts, hostname, "error-codes" }`.
 * The token says what the receiver does: good, bad, low (score 0.3), reset, 5xx, html, slow (no answer in 5 s).
 */
interface Seen {
  readonly provider: Provider;
  readonly fields: Record<string, string>;
}

const secrets: Record<Provider, string> = { turnstile: '0x4AAAAAAAturnstile-secret', hcaptcha: '0xhcaptcha-secret-value', recaptcha: '6Lrecaptcha-secret-value' };
const documented: Record<Provider, readonly string[]> = {
  turnstile: ['secret', 'response', 'remoteip', 'idempotency_key'],
  hcaptcha: ['secret', 'response', 'remoteip', 'sitekey'],
  recaptcha: ['secret', 'response', 'remoteip'],
};

forEachDatabase('CAPTCHA', (kind) => {
  let h: Harness;
  let receiver: http.Server;
  let urls: Record<string, string> = {};
  const seen: Seen[] = [];
  const problems: string[] = [];
  const hanging = new Set<http.ServerResponse>();

  before(async () => {
    receiver = http.createServer((req, res) => {
      const provider = (req.url ?? '').slice(1) as Provider;
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (req.method !== 'POST') problems.push(`${provider}: ${req.method ?? ''}`);
        if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) problems.push(`${provider}: content-type ${String(req.headers['content-type'])}`);
        const form = new URLSearchParams(body);
        const fields = Object.fromEntries(form);
        if ([...form.keys()].length !== Object.keys(fields).length) problems.push(`${provider}: a repeated field`);
        for (const key of Object.keys(fields)) if (!documented[provider]?.includes(key)) problems.push(`${provider}: undocumented field ${key}`);
        if (fields.secret !== secrets[provider]) problems.push(`${provider}: wrong secret`);
        if (!fields.response) problems.push(`${provider}: no response`);
        seen.push({ provider, fields });
        const token = fields.response ?? '';
        const now = new Date().toISOString();
        const answer = (o: object) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(o));
        if (token.startsWith('good')) {
          answer(provider === 'recaptcha' ? { success: true, score: 0.9, action: 'signup', challenge_ts: now, hostname: 'example.com' } : { success: true, challenge_ts: now, hostname: 'example.com', 'error-codes': [] });
        } else if (token.startsWith('low')) {
          answer({ success: true, score: 0.3, action: 'signup', challenge_ts: now, hostname: 'example.com' });
        } else if (token.startsWith('bad')) {
          answer({ success: false, 'error-codes': ['invalid-input-response'] });
        } else if (token.startsWith('reset')) {
          req.socket.destroy();
        } else if (token.startsWith('5xx')) {
          res.writeHead(502, { 'content-type': 'application/json' }).end('{"success":true}');
        } else if (token.startsWith('html')) {
          res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
        } else if (token.startsWith('slow')) {
          hanging.add(res);
        } else {
          answer({ success: false, 'error-codes': ['invalid-input-response'] });
        }
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    urls = { TURNSTILE_VERIFY_URL: `${base}/turnstile`, HCAPTCHA_VERIFY_URL: `${base}/hcaptcha`, RECAPTCHA_VERIFY_URL: `${base}/recaptcha` };
    h = await createHarness(kind, { env: urls });
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    await h.close();
  });

  const admin = async (command: AdminCommand) => runAdminCommand(adminDeps(h.services), command);
  const clientWith = async (provider: Provider, minScore?: number): Promise<{ client: ClientCredentials; token: string }> => {
    const client = await h.client();
    const updated = await admin({
      name: 'clients.update',
      id: client.clientId,
      change: { captcha: { provider, secret: secrets[provider], ...(minScore !== undefined && { minScore }) } },
    });
    assert.ok(updated.ok, JSON.stringify(updated));
    return { client, token: await h.token(undefined, client) };
  };
  let tokenSeq = 0;
  const fresh = (what: string) => `${what}-${process.pid}-${(tokenSeq += 1)}`;
  const create = (token: string, extra: object = {}) => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), ...extra });

  for (const provider of ['turnstile', 'hcaptcha', 'recaptcha'] as const) {
    it(`${provider}: a good token passes (once), a refused one is 403 CAPTCHA_FAILED, none is 403 CAPTCHA_REQUIRED`, async () => {
      const { token } = await clientWith(provider);
      const before = seen.length;
      expectV1Error(await create(token), 403, 'CAPTCHA_REQUIRED');
      assert.equal(seen.length, before, 'no token, no call');
      const good = fresh('good');
      const ok = await create(token, { captchaToken: good, signals: { ip: '::ffff:203.0.113.9' } });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(seen.at(-1), { provider, fields: { secret: secrets[provider], response: good, remoteip: '203.0.113.9' } });
      const noAddress = fresh('good');
      assert.equal((await create(token, { captchaToken: noAddress })).statusCode, 200);
      assert.deepEqual(seen.at(-1)?.fields, { secret: secrets[provider], response: noAddress }, 'no remoteip without signals.ip');
      expectV1Error(await create(token, { captchaToken: good }), 403, 'CAPTCHA_FAILED');
      const bad = expectV1Error(await create(token, { captchaToken: fresh('bad') }), 403, 'CAPTCHA_FAILED');
      assert.deepEqual(bad.error.details, [{ factor: 'captcha_failed', rule: 'captcha', mode: 'enforce' }]);
      assert.deepEqual(problems, []);
    });
  }

  it('reCAPTCHA v3: a score under --captcha-min-score is 403 CAPTCHA_FAILED; at or over it passes', async () => {
    const strict = await clientWith('recaptcha');
    expectV1Error(await create(strict.token, { captchaToken: fresh('low') }), 403, 'CAPTCHA_FAILED');
    const lenient = await clientWith('recaptcha', 0.3);
    assert.equal((await create(lenient.token, { captchaToken: fresh('low') })).statusCode, 200);
  });

  it('checks in order: validation, then the CAPTCHA, then countries', async () => {
    const { client, token } = await clientWith('turnstile');
    expectV1Error(await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: '0803' }), 400, 'INVALID_PHONE_NUMBER');
    assert.ok((await admin({ name: 'clients.update', id: client.clientId, change: { allowedCountries: ['GH'] } })).ok);
    expectV1Error(await create(token), 403, 'CAPTCHA_REQUIRED');
    expectV1Error(await create(token, { captchaToken: fresh('good') }), 403, 'NUMBER_NOT_ALLOWED');
  });

  it(
    'takes a token once across two instances',
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      const { token } = await clientWith('turnstile');
      await withSecondInstance(h, urls, async (other) => {
        const captchaToken = fresh('good');
        const answers = await Promise.all(
          [h.app, other.app, h.app, other.app].map((app) =>
            app.inject({ method: 'POST', url: '/v1/otp/request', headers: { authorization: `Bearer ${token}` }, payload: { countryCode: '+234', phoneNumber: nextLocalNumber(), captchaToken } }),
          ),
        );
        assert.deepEqual(answers.map((r) => r.statusCode).sort(), [200, 403, 403, 403]);
      });
    },
  );

  it('writes and counts nothing for a create the CAPTCHA refuses', async () => {
    const { token } = await clientWith('turnstile');
    const before = await sendCounts(h);
    for (const captchaToken of [undefined, fresh('bad')]) await create(token, captchaToken === undefined ? {} : { captchaToken });
    assert.deepEqual(await sendCounts(h), before);
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /otp_creates_refused_total\{reason="captcha"\} [1-9]/);
  });

  it('a provider that resets, answers 5xx, answers HTML or takes over 5 s is 503 UNAVAILABLE', async () => {
    const { token } = await clientWith('hcaptcha');
    for (const what of ['reset', '5xx', 'html', 'slow']) {
      const res = await create(token, { captchaToken: fresh(what) });
      expectV1Error(res, 503, 'UNAVAILABLE');
      assert.ok(Number(res.headers['retry-after']) > 0, what);
    }
  });

  it('shows the secret only by its first characters, and clears the CAPTCHA with --captcha none', async () => {
    const { client, token } = await clientWith('turnstile');
    const shown = await admin({ name: 'clients.show', id: client.clientId });
    assert.ok(shown.ok);
    const text = JSON.stringify(shown.value);
    assert.ok(!text.includes(secrets.turnstile), text);
    assert.match(text, /"captcha":\{"provider":"turnstile","secret":"0x4A… \(26 characters\)","minScore":0.5,"when":"always"\}/);
    const refused = await admin({ name: 'clients.update', id: client.clientId, change: { captcha: { provider: 'recaptcha' } } });
    assert.equal(refused.ok, false, 'another provider needs its own secret');
    assert.ok((await admin({ name: 'clients.update', id: client.clientId, change: { captcha: { provider: 'none' } } })).ok);
    assert.equal((await create(token)).statusCode, 200);
  });
});

forEachDatabase('CAPTCHA_FAIL_OPEN', (kind) => {
  let h: Harness;
  before(async () => {
    // Nothing listens on port 9 of this machine: every check is refused at once.
    h = await createHarness(kind, { env: { TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9/siteverify', CAPTCHA_FAIL_OPEN: 'true' } });
  });
  after(() => h.close());

  it('lets the create through when the provider does not answer, still one token once', async () => {
    const client = await h.client();
    assert.ok((await runAdminCommand(adminDeps(h.services), { name: 'clients.update', id: client.clientId, change: { captcha: { provider: 'turnstile', secret: 'x'.repeat(20) } } })).ok);
    const token = await h.token(undefined, client);
    const create = (captchaToken?: string) => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), ...(captchaToken && { captchaToken }) });
    expectV1Error(await create(), 403, 'CAPTCHA_REQUIRED');
    assert.equal((await create('any-token')).statusCode, 200);
    expectV1Error(await create('any-token'), 403, 'CAPTCHA_FAILED');
  });
});
