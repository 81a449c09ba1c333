import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { OtpAuthError, type RetryNotice } from '../../client/src/index.js';
import { forEachDatabase } from '../support/each-database.js';
import { freshNumber, rejection, startClientTestService, type ClientTestService } from './service.js';

/**
 * The typed client's access tokens (contracts 2 and 12), counted where they are issued: the service's own
 * otp_http_requests_total for POST /oauth2/token on GET /metrics. One token serves every call until shortly
 * before it expires (TOKEN_TTL_SECONDS=60 here: renewed 6 s before), one request fetches it however many calls
 * wait for it, a token the service refuses is renewed once, and refused credentials are an OtpAuthError.
 */

function authError(err: unknown, status: number, code: string): OtpAuthError {
  assert.ok(err instanceof OtpAuthError, `expected an OtpAuthError, got ${String(err)}`);
  assert.equal(err.status, status, err.message);
  assert.equal(err.code, code, err.message);
  return err;
}

forEachDatabase('typed client tokens', (kind) => {
  let s: ClientTestService;
  before(async () => {
    s = await startClientTestService(kind, { TOKEN_TTL_SECONDS: '60', PHONE_COOLDOWN_SECONDS: '0' });
  });
  after(() => s?.close());

  it('fetches one token for many calls, with one request even when twenty calls start at once', async () => {
    const client = s.client(await s.register());
    const created = await s.client(await s.register()).createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const before = await s.tokenRequests();
    // Another client's verification: each call is a 404 NOT_FOUND, after the token is in.
    const answers = await Promise.allSettled(Array.from({ length: 20 }, () => client.getVerification(created.id)));
    assert.ok(answers.every((a) => a.status === 'rejected' && Reflect.get(Object(a.reason), 'code') === 'NOT_FOUND'));
    for (let i = 0; i < 5; i += 1) await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    assert.equal((await s.tokenRequests()) - before, 1);
  });

  it('renews the token shortly before it expires, never after', async () => {
    let shift = 0;
    const client = s.client(await s.register(), { now: () => Date.now() + shift });
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const first = await s.tokenRequests();
    // 50 s on, on both clocks: the token is still the one cached.
    shift += 50_000;
    s.clock.advance(50_000);
    await client.getVerification(created.id);
    assert.equal(await s.tokenRequests(), first);
    // 55 s on: within the last tenth of its 60 s, so a new one, though the service would still take the old one.
    shift += 5_000;
    s.clock.advance(5_000);
    await client.getVerification(created.id);
    assert.equal(await s.tokenRequests(), first + 1);
    // 61 s on: the first token has expired, the second serves without another request.
    shift += 6_000;
    s.clock.advance(6_000);
    await client.getVerification(created.id);
    assert.equal(await s.tokenRequests(), first + 1);
  });

  it('renews a token the service refuses (401 invalid_token) once, and sends the call again', async () => {
    const notices: RetryNotice[] = [];
    // The client's clock lags: it takes its token for good when the service has seen it expire.
    const client = s.client(await s.register(), { onRetry: (n) => notices.push(n) });
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const before = await s.tokenRequests();
    s.clock.advance(61_000);
    const fetched = await client.getVerification(created.id);
    assert.equal(fetched.id, created.id);
    assert.equal((await s.tokenRequests()) - before, 1);
    assert.deepEqual(
      notices.map((n) => n.reason),
      ['token-refused'],
    );
  });

  it('throws OtpAuthError invalid_client once the client is disabled, after one renewal', async () => {
    const credentials = await s.register();
    const client = s.client(credentials);
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    await s.h.services.clients.disable(credentials.clientId);
    const before = await s.tokenRequests();
    authError(await rejection(() => client.getVerification(created.id)), 401, 'invalid_client');
    assert.equal((await s.tokenRequests()) - before, 1);
  });

  it('throws OtpAuthError for a wrong secret, an unknown client and a scope not registered, each asked once', async () => {
    const credentials = await s.register(['otp:send']);
    const cases = [
      { options: { clientSecret: `${credentials.clientSecret}x` }, status: 401, code: 'invalid_client' },
      { options: { clientId: crypto.randomUUID() }, status: 401, code: 'invalid_client' },
      { options: { scopes: ['otp:send', 'otp:verify'] as const }, status: 400, code: 'invalid_scope' },
    ];
    for (const { options, status, code } of cases) {
      const before = await s.tokenRequests();
      const err = authError(await rejection(() => s.client(credentials, options).createVerification({ countryCode: '+234', phoneNumber: freshNumber() })), status, code);
      assert.ok(!err.message.includes(credentials.clientSecret), 'the secret is not in the message');
      assert.equal((await s.tokenRequests()) - before, 1, code);
    }
  });
});
