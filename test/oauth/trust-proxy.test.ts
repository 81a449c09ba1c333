import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createHarness, type Harness } from '../support/harness.js';

describe('TRUST_PROXY (contract 6)', () => {
  it('takes false, a hop count (true is one hop), or the proxies\' addresses and CIDR ranges', () => {
    const parse = (TRUST_PROXY: string) => loadConfig({ TRUST_PROXY }).TRUST_PROXY;
    assert.equal(parse('false'), false);
    assert.equal(parse('true'), 1);
    assert.equal(parse('2'), 2);
    assert.equal(parse('10.0.0.1, 192.168.0.0/16,::1'), '10.0.0.1,192.168.0.0/16,::1');
    for (const bad of ['proxy.example.com', '10.0.0.0/33', '300.1.1.1']) assert.throws(() => parse(bad), /TRUST_PROXY/);
  });
});

/**
 * Behind one trusted proxy the client address is the last X-Forwarded-For entry (the one the proxy wrote):
 * entries the caller wrote to the left of it change nothing, so rotating them escapes no throttle.
 */
describe('the token endpoint behind a proxy', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness('pglite', { env: { TRUST_PROXY: '1', AUTH_FAILURE_LIMIT: '3' } });
  });
  after(() => h.close());

  it('throttles on the first untrusted hop, whatever the caller writes before it', async () => {
    const c = await h.client(['otp:send']);
    const attempt = (forged: string) =>
      h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress: '10.9.9.9',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `${forged}, 203.0.113.7` },
        payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: 'cs_guess' }).toString(),
      });
    for (let i = 0; i < 3; i++) assert.equal((await attempt(`198.51.100.${i}`)).statusCode, 401);
    assert.equal((await attempt('198.51.100.200')).statusCode, 429, 'a new left-most address does not escape');
  });
});
