import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { twilioSmsSettings } from './support/provider-settings.js';

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

/** Issue 17: development parts never run silently beside real providers or in production. */
const twilioSms = twilioSmsSettings;

it('turns a channel nobody named off beside a real provider, rather than "sending" through log', () => {
  const names = (env: Record<string, string>) => {
    const c = loadConfig({ DATA_DIR: 'memory://', ...env });
    return { sms: c.providers.sms.map((p) => p.module.name), call: c.providers.call.map((p) => p.module.name) };
  };
  assert.deepEqual(names({}), { sms: ['log'], call: ['log'] }, 'development with no provider named: log for both');
  assert.deepEqual(names(twilioSms), { sms: ['twilio'], call: [] });
  assert.deepEqual(names({ ...twilioSms, CALL_PROVIDER: 'log' }), { sms: ['twilio'], call: ['log'] }, 'log named outright is kept');
  assert.deepEqual(names({ CALL_PROVIDER: 'log' }), { sms: [], call: ['log'] });
});

it('refuses development parts with NODE_ENV=production: no provider, a log provider, DEV_INBOX=true', () => {
  const prod = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db.example/otp' };
  assert.throws(() => loadConfig(prod), /SMS_PROVIDER: NODE_ENV=production needs a real provider/);
  assert.throws(() => loadConfig({ ...prod, SMS_PROVIDER: 'log' }), /SMS_PROVIDER: log sends nothing/);
  assert.throws(() => loadConfig({ ...prod, ...twilioSms, CALL_PROVIDER: 'log' }), /CALL_PROVIDER: log sends nothing/);
  assert.throws(() => loadConfig({ ...prod, ...twilioSms, DEV_INBOX: 'true' }), /DEV_INBOX: true is refused with NODE_ENV=production/);
  const c = loadConfig({ ...prod, ...twilioSms });
  assert.equal(c.devInbox, false);
  assert.equal(c.revealCodesDefault, false, 'new clients withhold their codes in production');
  assert.equal(loadConfig({ ...prod, ...twilioSms, REVEAL_CODES_DEFAULT: 'true' }).revealCodesDefault, true);
  assert.equal(loadConfig({}).revealCodesDefault, true, 'development shows them');
  assert.equal(loadConfig({ REVEAL_CODES_DEFAULT: 'false' }).revealCodesDefault, false);
  assert.deepEqual(c.providers.call, []);
});

it('serves the development inbox by default only to this machine', () => {
  assert.equal(loadConfig({ DATA_DIR: 'memory://' }).devInbox, true, 'embedded database: bound to 127.0.0.1');
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db.example/otp' }).devInbox, false, 'PostgreSQL: bound to every interface');
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db.example/otp', HOST: '127.0.0.1' }).devInbox, true);
  assert.equal(loadConfig({ DATA_DIR: 'memory://', HOST: '0.0.0.0' }).devInbox, false);
  assert.equal(loadConfig({ DATA_DIR: 'memory://', HOST: '::1' }).devInbox, true);
  assert.equal(loadConfig({ DATA_DIR: 'memory://', HOST: '0.0.0.0', DEV_INBOX: 'true' }).devInbox, true, 'asked for outright');
});
