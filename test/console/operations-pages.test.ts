import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { browserSkip } from '../support/browser.js';
import { forEachDatabase } from '../support/each-database.js';
import { waitFor } from '../webhooks/helpers.js';
import { consoleInBrowser, password } from './in-browser.js';
import { readConversion } from '../support/throttle-calls.js';

/**
 * Contract 16 in Debian's chromium on both databases: throttles lifted on the fraud page, an open circuit on the
 * providers page, and an operator's own account; each checked where it lands (/v1 creates, the CLI's commands,
 * sign-in), with axe-core and screenshots under test-output/console/.
 */
const suite = (kind: 'pglite' | 'postgres') => {
  const { t, cli, number, newPage, check, go, signIn, operator, ownClient } = consoleInBrowser(kind);

  it('lifts a country throttle and a client throttle on the fraud t.page, after which creates pass', async () => {
    // Clients of their own, with no verified code anywhere: every country is new to neither (NEW_COUNTRY_LIMIT_COUNT).
    const towardsGhana = await ownClient('ghana traffic');
    const throttled = await ownClient('throttled client');
    let gh = 0;
    const ghana = () => {
      gh += 1;
      return { countryCode: '+233', phoneNumber: `024${String(1000 + gh).padStart(4, '0')}${String(100 + gh).slice(-3)}` };
    };
    const first = await towardsGhana.create('', ghana());
    assert.equal(first.status, 200);
    // Throttles as the conversion watch starts them (its figures would take an hour of real traffic to gather).
    const now = new Date();
    const until = new Date(now.getTime() + 3_600_000);
    await t.server.services.conversionStore.throttle(
      [{ regionCode: 'GH', countryCode: String(first.body.data.countryCode), network: 'MTN', provider: 'log', sends: 250, delivered: 0, verified: 3 }],
      now,
      until,
    );
    await t.server.services.conversionStore.throttleClients([{ clientId: throttled.clientId, sends: 300, verified: 0 }], now, until);
    await readConversion(t.server.services);
    /** Creates until one is refused (each throttle caps creates at PREFIX_LIMIT_COUNT=3): its answer. */
    const untilRefused = async (make: () => Promise<{ status: number; body: { error?: { code: string } } }>) => {
      for (let i = 0; i < 6; i += 1) {
        const r = await make();
        if (r.status !== 200) return r;
      }
      return assert.fail('never refused');
    };
    const ghRefused = await untilRefused(() => towardsGhana.create('', ghana()));
    assert.deepEqual([ghRefused.status, ghRefused.body.error?.code], [429, 'RATE_LIMITED']);
    const clientRefused = await untilRefused(() => throttled.create(number()));
    assert.deepEqual([clientRefused.status, clientRefused.body.error?.code], [429, 'RATE_LIMITED']);

    // Loaded afresh: the t.page is the fraud t.page already, from the test before.
    await t.page.goto(`${t.base}/console/fraud`);
    const country = t.page.locator('tr[data-block="GH"]');
    const client = t.page.locator(`tr[data-block="${throttled.clientId}"]`);
    await country.waitFor();
    await client.waitFor();
    assert.match((await country.textContent()) ?? '', /GH \(\+?233\) MTN via log: 3\/250 verified, throttled/);
    assert.match((await client.textContent()) ?? '', /0\/300 verified across all countries, throttled/);
    await check(t.page, 'fraud-throttles');
    await country.getByRole('button', { name: 'Lift GH' }).click();
    await t.page.locator('#fraud-state', { hasText: 'Lifted GH' }).waitFor();
    await country.waitFor({ state: 'detached' });
    assert.equal((await towardsGhana.create('', ghana())).status, 200, 'Ghana takes creates again');
    await client.getByRole('button', { name: `Lift ${throttled.clientId}` }).click();
    await t.page.locator('#fraud-state', { hasText: `Lifted ${throttled.clientId}` }).waitFor();
    await client.waitFor({ state: 'detached' });
    assert.equal((await throttled.create(number())).status, 200, 'the client takes creates again');
    const listed = await cli({ name: 'blocks.list' });
    assert.ok(listed.ok);
    assert.deepEqual((listed.value as { country?: string; clientId?: string }[]).filter((b) => b.country === 'GH' || b.clientId === throttled.clientId), []);
  });

  it('shows an open circuit on the providers t.page once the SMS provider failed five sends in a row', async () => {
    // The log provider stands in for a gateway that answers 503 to these numbers (as the delivery tests' scripted
    // provider does): the send worker records each failure on the server's own circuit breaker.
    const [log] = t.server.services.providers.forChannel('sms');
    assert.ok(log);
    const sender = await ownClient('failing sends');
    const failing = new Set<string>();
    const send = log.send.bind(log);
    log.send = async (message, signal) => (failing.has(message.to) ? { kind: 'transient', reason: 'gateway 503' } : send(message, signal));
    try {
      for (let i = 0; i < 5; i += 1) {
        const phone = number();
        failing.add(`+234${phone.slice(1)}`);
        assert.equal((await sender.create(phone)).status, 200);
      }
      await waitFor('the circuit to open', async () => {
        const status = await cli({ name: 'providers.status' });
        return status.ok && (status.value as { channel: string; provider: string; circuit: string }[]).some((p) => p.channel === 'sms' && p.provider === 'log' && p.circuit === 'open');
      });
      await go(t.page, 'Providers');
      const row = t.page.locator('#providers tr[data-provider="log"][data-channel="sms"]');
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', /open until \d{4}-\d\d-\d\dT/);
      await check(t.page, 'providers-open');
    } finally {
      log.send = send;
    }
  });

  it("changes an operator's own password (with the current one) and removes their passkey, audited and CSRF-protected", async () => {
    await operator('self@example.com');
    const signInWith = (pw: string) =>
      fetch(`${t.base}/console/api/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: t.base },
        body: JSON.stringify({ email: 'self@example.com', password: pw }),
      });
    // Another session of the same operator (another t.browser): it ends when the password changes.
    const other = (await signInWith(password)).headers.get('set-cookie')?.split(';')[0] ?? '';
    const otherAlive = async () => (await fetch(`${t.base}/console/api/session`, { headers: { cookie: other } })).status;
    assert.equal(await otherAlive(), 200);

    const ctx = await t.browser.newContext({ viewport: { width: 1200, height: 900 } });
    const p = await newPage(ctx);
    const cdp = await ctx.newCDPSession(p);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await signIn(p, 'self@example.com');
    await p.goto(`${t.base}/console/passkey`);
    await p.locator('#add-passkey').click();
    await p.locator('#passkey-state', { hasText: 'Passkey added' }).waitFor({ timeout: 15_000 });

    await p.getByRole('link', { name: 'self@example.com (your account)' }).click();
    await p.getByRole('heading', { name: 'Your account' }).waitFor();
    const rows = p.locator('#passkeys tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1);
    await check(p, 'account');

    // A wrong current password: refused in the t.page, and nothing changed.
    await p.getByLabel('Current password').fill('not the password');
    await p.getByLabel('New password (12 to 200 characters)').fill('a brand new password');
    await p.getByLabel('The new password again').fill('a brand new password');
    await p.getByRole('button', { name: 'Change password' }).click();
    await p.locator('#password-problem', { hasText: 'The current password is wrong' }).waitFor();
    assert.equal(await otherAlive(), 200);
    await p.getByLabel('Current password').fill(password);
    await p.getByRole('button', { name: 'Change password' }).click();
    await p.locator('#password-state', { hasText: 'Password changed' }).waitFor();
    assert.equal(await otherAlive(), 401, 'the other session ended');
    assert.equal((await signInWith(password)).status, 401, 'the old password no longer signs in');
    assert.equal((await signInWith('a brand new password')).status, 200, 'the new one does');
    assert.equal((await p.request.get(`${t.base}/console/api/session`)).status(), 200, 'the session that changed it goes on');
    // Without the CSRF token, from the operator's own browser: refused.
    const forged = await ctx.request.post(`${t.base}/console/api/account/password`, { data: { current: 'a brand new password', password: 'forged password 123' }, headers: { origin: t.base } });
    assert.equal(forged.status(), 403);
    assert.equal(((await forged.json()) as { error: { code: string } }).error.code, 'CSRF_REFUSED');

    // The passkey removed: it signs nobody in afterwards.
    await p.getByRole('button', { name: /^Remove passkey 1/ }).click();
    await p.locator('#passkeys-state', { hasText: 'Passkey removed' }).waitFor();
    await p.locator('#no-passkeys').waitFor();
    const ops = await cli({ name: 'operators.list' });
    assert.ok(ops.ok);
    assert.equal((ops.value as { email: string; passkeys: number }[]).find((o) => o.email === 'self@example.com')?.passkeys, 0);
    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await p.getByRole('alert').waitFor({ timeout: 15_000 });
    assert.equal(await p.getByRole('heading', { name: 'Overview' }).count(), 0, 'not signed in');

    const audit = await cli({ name: 'audit.list', limit: 50 });
    assert.ok(audit.ok);
    const mine = (audit.value as { actor: string; action: string; outcome: string }[]).filter((e) => e.actor === 'operator:self@example.com' && e.action.startsWith('console.'));
    assert.deepEqual(
      mine.filter((e) => e.action !== 'console.sign-in' && e.action !== 'console.sign-out').map((e) => [e.action, e.outcome]),
      [
        ['console.remove-passkey', 'ok'],
        ['console.change-password', 'ok'],
        ['console.change-password', 'refused: wrong current password'],
        ['console.add-passkey', 'ok'],
        ['console.set-password', 'ok'],
      ],
    );
    await ctx.close();
  });

  it('has no serious accessibility violation and no refused script or style', () => {
    assert.deepEqual(t.violations, []);
    // The 400s of refused settings and templates, and the 401 of a removed passkey, are answers the pages show.
    assert.deepEqual(t.pageErrors.filter((e) => !/status of (400|401|429)/.test(e)), []);
  });
};

if (browserSkip) describe('fraud, providers and account pages of the console in chromium', { skip: browserSkip }, () => undefined);
else forEachDatabase('fraud, providers and account pages of the console in chromium', suite);
