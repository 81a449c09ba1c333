import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { buildApp } from '../../src/http/app.js';
import { appDeps } from '../../src/server.js';
import { expectV1Error } from '../support/api.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startLog } from '../support/start-log.js';

/** Issue 10 item 8: with PUBLIC_BASE_URL unset, discovery reflects only a well-formed host, and never to a cache. */
let h: Harness;
before(async () => {
  h = await createHarness('pglite');
});
after(() => h.close());

const metadata = (host: string, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host, ...headers } });

it('derives the issuer from a well-formed Host, with Cache-Control: no-store', async () => {
  for (const host of ['otp.example:8443', 'otp.example', '127.0.0.1:3000', '[::1]:3000', 'localhost']) {
    const res = await metadata(host);
    assert.equal(res.statusCode, 200, host);
    assert.equal(res.json().token_endpoint, `http://${host}/oauth2/token`);
    assert.equal(res.headers['cache-control'], 'no-store', host);
  }
});

it('refuses a Host that is not host[:port] with 400 BAD_REQUEST, reflecting nothing', async () => {
  for (const host of ['evil.test"><script>', "evil.test'", 'a b', 'evil.test:99999', 'evil.test:1/x', 'user@evil.test', '-x.test', '[::1']) {
    const res = await metadata(host);
    expectV1Error(res, 400, 'BAD_REQUEST');
    assert.ok(!res.body.includes(host), `${host} echoed: ${res.body}`);
  }
});

it('uses PUBLIC_BASE_URL when set, whatever the Host', async () => {
  const app = await buildApp({ ...appDeps(h.services), publicBaseUrl: 'https://otp.example.org' });
  try {
    const res = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: 'evil.test"<' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().token_endpoint, 'https://otp.example.org/oauth2/token');
  } finally {
    await app.close();
  }
});

it('warns at start in production when PUBLIC_BASE_URL is unset, and not otherwise', async () => {
  // Production needs a real provider; an SMSC nobody answers at is one that needs no PUBLIC_BASE_URL of its own.
  const production = { NODE_ENV: 'production', SMS_PROVIDER: 'smpp', SMPP_URL: 'smpp://otp:secret@127.0.0.1:9' };
  assert.match(await startLog(production), /PUBLIC_BASE_URL is unset in production/);
  assert.doesNotMatch(await startLog({ ...production, PUBLIC_BASE_URL: 'https://otp.example.org' }), /PUBLIC_BASE_URL is unset/);
  assert.doesNotMatch(await startLog({}), /PUBLIC_BASE_URL is unset/);
});
