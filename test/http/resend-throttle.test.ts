import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { expectV1Error } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';
import { readConversion } from '../support/throttle-calls.js';

/**
 * Issue 20, attack 4: a client whose resends are seldom verified (MIN_RESEND_SAMPLE within the short window, under
 * MIN_CONVERSION) resends a code of a user with no verified history at most UNKNOWN_USER_RESENDS times.
 */
const sample = 4;
const env = {
  MIN_RESEND_SAMPLE: String(sample),
  UNKNOWN_USER_RESENDS: '1',
  // Only the resend rule judges here: no country or client throttle, no new-country cap.
  MIN_CONVERSION_SAMPLE: '100000',
  MIN_CONVERSION_SHORT_SAMPLE: '100000',
  NEW_COUNTRY_LIMIT_COUNT: '0',
};

let seq = 0;
/**
 * A Nigerian number in a range of its own (prefix velocity never trips), from an address and device of its own in
 * Nigeria (102.88.0.0/13 is Nigerian: a local user, who gets the free resends).
 */
const unknownUser = () => {
  seq += 1;
  const n = String(1000 + ((process.pid + seq) % 9000)).padStart(4, '0');
  return {
    countryCode: '+234',
    phoneNumber: `0805${n}${String(seq % 1000).padStart(3, '0')}`,
    signals: { ip: `102.${88 + ((process.pid + seq) % 8)}.${seq % 250}.9`, deviceId: `resend-device-${process.pid}-${seq}` },
  };
};

interface Made {
  readonly id: string;
  readonly otp: string;
}

forEachDatabase('resends throttled for their conversion', (kind) => {
  const secret = '0x4AAAAAAAresend-secret';
  let h: Harness;
  let receiver: http.Server;
  /** A local Turnstile siteverify: a token starting `good` passes, any other fails. */
  before(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const success = form.get('secret') === secret && (form.get('response') ?? '').startsWith('good');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success, 'error-codes': success ? [] : ['invalid-input-response'] }));
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    h = await createHarness(kind, { env: { ...env, TURNSTILE_VERIFY_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/turnstile` } });
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    await h.close();
  });

  const create = async (token: string, body: { countryCode: string; phoneNumber: string; signals?: Record<string, string> }): Promise<Made> => {
    const res = await h.call('POST', '/v1/otp/request', token, body);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Made }).data;
  };
  const resend = (token: string, v: Made, app = h.app, captchaToken?: string) =>
    app.inject({
      method: 'POST',
      url: `/v1/otp/${v.id}/resend`,
      headers: { authorization: `Bearer ${token}` },
      ...(captchaToken !== undefined && { payload: { captchaToken } }),
    });
  const resent = async (token: string, v: Made) => {
    const res = await resend(token, v);
    assert.equal(res.statusCode, 200, res.body);
  };
  const verify = async (token: string, v: Made) => assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp })).statusCode, 200);
  const cooldown = () => h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
  /** Moves the clock past the short window's last half minute, and reads conversion as the background task does. */
  const settleAndRefresh = async (services = h.services) => {
    h.clock.advance(31_000);
    await readConversion(services);
  };
  const newClient = async () => {
    const c = await h.client();
    return { clientId: c.clientId, token: await h.token(undefined, c) };
  };
  /** `n` codes of unknown users, each resent once, none verified. */
  const resendUnverified = async (token: string, n: number) => {
    const codes = [];
    for (let i = 0; i < n; i += 1) codes.push(await create(token, unknownUser()));
    cooldown();
    for (const v of codes) await resent(token, v);
    return codes;
  };

  it(`throttles on ${sample} resends seldom verified, not on ${sample - 1}, and then gives an unknown user one resend a code`, async () => {
    const { clientId, token } = await newClient();
    const [first] = await resendUnverified(token, sample - 1);
    await settleAndRefresh();
    assert.equal(h.services.conversion.resendThrottleOn(clientId, h.clock.now()), null);
    // One short of the sample: a second resend of an unknown user's code goes.
    assert.ok(first);
    await resent(token, first);
    // The sample reached (the three codes, one of them resent twice): throttled.
    await settleAndRefresh();
    const throttle = h.services.conversion.resendThrottleOn(clientId, h.clock.now());
    assert.ok(throttle, 'the client should be throttled');
    assert.equal(throttle.resends, sample);
    assert.equal(throttle.verified, 0);
    const v = await create(token, unknownUser());
    cooldown();
    await resent(token, v);
    cooldown();
    const refused = expectV1Error(await resend(token, v), 429, 'RATE_LIMITED');
    assert.match(refused.message, /MIN_RESEND_SAMPLE/);
    // `otp-service blocks list` shows it, and `blocks lift CLIENT_ID` ends it.
    const listed = await runAdminCommand(adminDeps(h.services), { name: 'blocks.list' });
    assert.ok(listed.ok);
    assert.ok((listed.value as { clientId?: string; of?: string }[]).some((b) => b.clientId === clientId && b.of === 'resends'), JSON.stringify(listed.value));
    const lifted = await runAdminCommand(adminDeps(h.services), { name: 'blocks.lift', prefix: clientId });
    assert.ok(lifted.ok, JSON.stringify(lifted));
    await resent(token, v);
    // Another client's resends are its own.
    const other = await newClient();
    const w = await create(other.token, unknownUser());
    cooldown();
    await resent(other.token, w);
    cooldown();
    await resent(other.token, w);
  });

  it('leaves a client alone whose resent codes are verified at MIN_CONVERSION', async () => {
    const { clientId, token } = await newClient();
    const codes = await resendUnverified(token, 5);
    assert.ok(codes[0]);
    await verify(token, codes[0]);
    await settleAndRefresh();
    assert.equal(h.services.conversion.resendThrottleOn(clientId, h.clock.now()), null);
  });

  it('lets a number, address, network or device with a verified code past the throttle', async () => {
    const c = await h.client();
    const clientId = c.clientId;
    let token = await h.token(undefined, c);
    // Users who verified yesterday: a number, an address, a network, a device.
    const number = unknownUser();
    const address = unknownUser();
    const network = unknownUser();
    const device = unknownUser();
    for (const u of [number, address, network, device]) await verify(token, await create(token, u));
    h.clock.advance(86_400_000);
    token = await h.token(undefined, c);
    await resendUnverified(token, sample);
    await settleAndRefresh();
    assert.ok(h.services.conversion.resendThrottleOn(clientId, h.clock.now()));
    const networkOf = (ip: string) => ip.replace(/\.\d+$/, '.200');
    const today = [
      { ...unknownUser(), countryCode: number.countryCode, phoneNumber: number.phoneNumber },
      { ...unknownUser(), signals: { ip: address.signals.ip } },
      { ...unknownUser(), signals: { ip: networkOf(network.signals.ip) } },
      { ...unknownUser(), signals: { ip: unknownUser().signals.ip, deviceId: device.signals.deviceId } },
    ];
    const codes = [];
    for (const u of today) codes.push(await create(token, u));
    const stranger = await create(token, unknownUser());
    cooldown();
    for (const v of [...codes, stranger]) await resent(token, v);
    cooldown();
    for (const v of codes) await resent(token, v);
    expectV1Error(await resend(token, stranger), 429, 'RATE_LIMITED');
  });

  it('asks a client with --captcha-when throttled for a CAPTCHA from an unknown user\'s first resend, and a good token goes past', async () => {
    const c = await h.client();
    const updated = await runAdminCommand(adminDeps(h.services), { name: 'clients.update', id: c.clientId, change: { captcha: { provider: 'turnstile', secret, when: 'throttled' } } });
    assert.ok(updated.ok, JSON.stringify(updated));
    const token = await h.token(undefined, c);
    await resendUnverified(token, sample);
    await settleAndRefresh();
    assert.ok(h.services.conversion.resendThrottleOn(c.clientId, h.clock.now()));
    const v = await create(token, unknownUser());
    cooldown();
    expectV1Error(await resend(token, v), 403, 'CAPTCHA_REQUIRED');
    expectV1Error(await resend(token, v, h.app, `bad-${process.pid}`), 403, 'CAPTCHA_FAILED');
    expectV1Error(await resend(token, v, h.app, ''), 400, 'VALIDATION_ERROR');
    assert.equal((await resend(token, v, h.app, `good-${process.pid}-1`)).statusCode, 200);
    cooldown();
    // Each token once.
    expectV1Error(await resend(token, v, h.app, `good-${process.pid}-1`), 403, 'CAPTCHA_FAILED');
    assert.equal((await resend(token, v, h.app, `good-${process.pid}-2`)).statusCode, 200);
  });

  it('counts its refusals in otp_resends_refused_total', async () => {
    const { token } = await newClient();
    const v = await create(token, unknownUser());
    await resend(token, v);
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /otp_resends_refused_total\{reason="cooldown"\} [1-9]/);
  });

  it(
    'is started by one instance and kept by the other, on one PostgreSQL',
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      await withSecondInstance(h, env, async (other) => {
        const { clientId, token } = await newClient();
        await resendUnverified(token, sample);
        h.clock.advance(31_000);
        // Both read conversion at once: one throttle row, the same on each.
        await Promise.all([readConversion(h.services), readConversion(other.services)]);
        const mine = h.services.conversion.resendThrottleOn(clientId, h.clock.now());
        const theirs = other.services.conversion.resendThrottleOn(clientId, h.clock.now());
        assert.ok(mine && theirs);
        assert.equal(mine.throttledAt.getTime(), theirs.throttledAt.getTime());
        const v = await create(token, unknownUser());
        cooldown();
        await resent(token, v);
        cooldown();
        expectV1Error(await resend(token, v, other.app), 429, 'RATE_LIMITED');
      });
    },
  );
});
