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
