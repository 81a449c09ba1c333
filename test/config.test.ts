import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

/** Issue 10, first start: the embedded development mode (and its printed client) is reachable from this machine only. */
it('binds to loopback on the embedded database and to every interface with DATABASE_URL, unless HOST says otherwise', () => {
  assert.equal(loadConfig({ DATA_DIR: 'memory://' }).listenHost, '127.0.0.1');
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db.example/otp' }).listenHost, '0.0.0.0');
  assert.equal(loadConfig({ DATA_DIR: 'memory://', HOST: '0.0.0.0' }).listenHost, '0.0.0.0');
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db.example/otp', HOST: '10.0.0.5' }).listenHost, '10.0.0.5');
});

it('refuses HEADERS_TIMEOUT_MS longer than REQUEST_TIMEOUT_MS (Node would refuse the server)', () => {
  assert.throws(() => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }), ConfigError);
  assert.equal(loadConfig({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1000' }).REQUEST_TIMEOUT_MS, 1000);
});

it('refuses a SEND_LEASE_MS a real call could outlast (CALL_RING_SECONDS + 5 s), and a CALL_RING_SECONDS out of bounds', () => {
  const gateway = { CALL_PROVIDER: 'http', HTTP_GATEWAY_URL: 'https://gw.example/send', HTTP_GATEWAY_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, PUBLIC_BASE_URL: 'https://otp.example' };
  assert.throws(() => loadConfig({ ...gateway, CALL_RING_SECONDS: '15', SEND_LEASE_MS: '20000' }), /SEND_LEASE_MS: must be longer than a call may take/);
  assert.equal(loadConfig({ ...gateway, CALL_RING_SECONDS: '15', SEND_LEASE_MS: '20001' }).SEND_LEASE_MS, 20001);
  // `log` places no real call: nothing rings, so any lease longer than PROVIDER_TIMEOUT_MS does.
  assert.equal(loadConfig({ PROVIDER_TIMEOUT_MS: '1000', SEND_LEASE_MS: '1500' }).SEND_LEASE_MS, 1500);
  assert.throws(() => loadConfig({ CALL_RING_SECONDS: '2' }), /CALL_RING_SECONDS/);
  assert.throws(() => loadConfig({ CALL_RING_SECONDS: '61' }), /CALL_RING_SECONDS/);
  assert.throws(() => loadConfig({ CALL_FALLBACK_TO_SMS: 'yes please' }), /CALL_FALLBACK_TO_SMS/);
});

it('reads ALLOWED_COUNTRIES (all, or alpha-2 codes) and BLOCKED_LINE_TYPES (none, or line types), refusing anything else', () => {
  const base = { DATA_DIR: 'memory://' };
  assert.equal(loadConfig(base).ALLOWED_COUNTRIES, null);
  assert.deepEqual(loadConfig({ ...base, ALLOWED_COUNTRIES: 'ng, gh,NG' }).ALLOWED_COUNTRIES, ['GH', 'NG']);
  assert.throws(() => loadConfig({ ...base, ALLOWED_COUNTRIES: 'NGA' }), /ALLOWED_COUNTRIES: .*NGA/);
  assert.throws(() => loadConfig({ ...base, ALLOWED_COUNTRIES: ',' }), /ALLOWED_COUNTRIES/);
  assert.deepEqual(loadConfig(base).BLOCKED_LINE_TYPES, ['PREMIUM_RATE', 'SHARED_COST', 'UAN', 'PAGER', 'VOICEMAIL']);
  assert.deepEqual(loadConfig({ ...base, BLOCKED_LINE_TYPES: 'none' }).BLOCKED_LINE_TYPES, []);
  assert.deepEqual(loadConfig({ ...base, BLOCKED_LINE_TYPES: 'voip, toll_free' }).BLOCKED_LINE_TYPES, ['VOIP', 'TOLL_FREE']);
  assert.throws(() => loadConfig({ ...base, BLOCKED_LINE_TYPES: 'SATELLITE' }), /BLOCKED_LINE_TYPES: .*SATELLITE/);
});
