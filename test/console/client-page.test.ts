import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { browserSkip } from '../support/browser.js';
import { forEachDatabase } from '../support/each-database.js';
import { zitadelSignatureHeader, zitadelSmsPayload } from '../support/zitadel-sender.js';
import { waitFor } from '../webhooks/helpers.js';
import { consoleInBrowser } from './in-browser.js';

/**
 * Contract 16, a client's page in Debian's chromium on both databases: every setting `clients update` takes, voice
 * templates beside SMS ones, and the relay hooks with ZITADEL's signing key; each checked where it lands (`clients show`, /v1, the next
 * message, the relay), with axe-core and screenshots under test-output/console/.
 */
const suite = (kind: 'pglite' | 'postgres') => {
  const { t, cli, number, check, ownClient, settingsOf, lastMessageTo } = consoleInBrowser(kind);

  it('saves every setting clients update takes, shows a refusal in its own words, and /v1 follows them', async () => {
    const own = await ownClient('settings client');
    await t.page.goto(`${t.base}/console/clients/${own.clientId}`);
    await t.page.getByRole('heading', { name: 'Client settings client' }).waitFor();
    // A refusal: the command's own message beside the form, and nothing saved.
    await t.page.getByLabel('Then, in order', { exact: false }).fill('CARRIER_PIGEON');
    await t.page.getByRole('button', { name: 'Save settings' }).click();
    const problem = t.page.locator('#settings-problem');
    await problem.waitFor();
    assert.match((await problem.textContent()) ?? '', /^Not saved: --fallback takes request types from .*; not CARRIER_PIGEON$/);
    assert.deepEqual((await settingsOf(own.clientId)).fallback, [], 'a refused change saves nothing');

    await t.page.getByLabel('Default locale', { exact: false }).fill('fr-ca');
    await t.page.getByLabel('WebOTP domain', { exact: false }).fill('Example.com');
    await t.page.getByLabel('Android app hash', { exact: false }).fill('FA+9qCX9VSu');
    await t.page.getByLabel('Then, in order', { exact: false }).fill('voice_call');
    await t.page.getByLabel('Next step after', { exact: false }).fill('45');
    await t.page.getByLabel('Provider', { exact: true }).selectOption('turnstile');
    await t.page.getByLabel('Secret key', { exact: false }).fill('0x4AAAAAAAturnstile-secret');
    await t.page.getByLabel('Minimum score', { exact: false }).fill('0.7');
    await t.page.getByLabel('Ask for a token').selectOption('always');
    await t.page.getByRole('button', { name: 'Save settings' }).click();
    await t.page.locator('#settings-state', { hasText: 'Settings saved' }).waitFor();
    const saved = await settingsOf(own.clientId);
    assert.deepEqual(
      { defaultLocale: saved.defaultLocale, webotpDomain: saved.webotpDomain, androidAppHash: saved.androidAppHash, fallback: saved.fallback, fallbackAfterSeconds: saved.fallbackAfterSeconds, captcha: saved.captcha },
      {
        defaultLocale: 'fr-CA',
        webotpDomain: 'example.com',
        androidAppHash: 'FA+9qCX9VSu',
        fallback: ['VOICE_CALL'],
        fallbackAfterSeconds: 45,
        captcha: { provider: 'turnstile', secret: '0x4A… (26 characters)', minScore: 0.7, when: 'always' },
      },
      'what clients show returns',
    );
    // CAPTCHA always: a create without a token is refused.
    const refused = await own.create(number());
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.code, 'CAPTCHA_REQUIRED');

    // The t.page again: the secret shown masked, never in a field; saved again empty, it is kept.
    await t.page.reload();
    await t.page.getByRole('heading', { name: 'Client settings client' }).waitFor();
    assert.match((await t.page.locator('label[for="captcha-secret"]').textContent()) ?? '', /now 0x4A… \(26 characters\); empty: kept/);
    assert.equal(await t.page.getByLabel('Secret key', { exact: false }).inputValue(), '');
    assert.equal(await t.page.getByLabel('Next step after', { exact: false }).inputValue(), '45');
    // The keyboard reaches every new field in order.
    await t.page.getByLabel('Android app hash', { exact: false }).focus();
    for (const next of ['fallback', 'fallback-after', 'captcha-provider', 'captcha-secret', 'captcha-min-score', 'captcha-when']) {
      await t.page.keyboard.press('Tab');
      assert.equal(await t.page.evaluate(() => document.activeElement?.id), next);
    }
    await t.page.getByLabel('Minimum score', { exact: false }).fill('0.6');
    await t.page.getByLabel('Ask for a token').selectOption('throttled');
    await t.page.getByRole('button', { name: 'Save settings' }).click();
    // The status said "saved" already: the change is awaited where it lands.
    await waitFor('the second save', async () => ((await settingsOf(own.clientId)).captcha as { when: string }).when === 'throttled' || undefined);
    await t.page.locator('#settings-state', { hasText: 'Settings saved' }).waitFor();
    assert.deepEqual((await settingsOf(own.clientId)).captcha, { provider: 'turnstile', secret: '0x4A… (26 characters)', minScore: 0.6, when: 'throttled' });
    await check(t.page, 'client-settings');

    // CAPTCHA only when throttled: nothing is, so the create passes, and its record carries the workflow.
    const made = await own.create(number());
    assert.equal(made.status, 200);
    assert.deepEqual(made.body.data.fallback, ['VOICE_CALL']);
    await t.page.getByLabel('Provider', { exact: true }).selectOption('none');
    await t.page.getByLabel('Then, in order', { exact: false }).fill('');
    await t.page.getByRole('button', { name: 'Save settings' }).click();
    await waitFor('the third save', async () => (await settingsOf(own.clientId)).captcha === null || undefined);
    const cleared = await settingsOf(own.clientId);
    assert.deepEqual([cleared.captcha, cleared.fallback], [null, []]);
    assert.deepEqual((await own.create(number())).body.data.fallback, []);

    // A budget: a malformed amount is refused in the command's words; saved, the page shows what is spent beside it.
    await t.page.getByLabel('Most its codes may cost in a UTC day', { exact: false }).fill('25,00');
    await t.page.getByRole('button', { name: 'Save settings' }).click();
    await t.page.locator('#settings-problem', { hasText: '--daily-spend-limit must be an amount' }).waitFor();
    await t.page.getByLabel('Most its codes may cost in a UTC day', { exact: false }).fill('0.50');
    await t.page.getByLabel('Most its codes may cost in a UTC month', { exact: false }).fill('10');
    await t.page.getByRole('button', { name: 'Save settings' }).click();
    await t.page.locator('#spent-day', { hasText: '0 of 0.5' }).waitFor();
    assert.equal(await t.page.locator('#spent-month').textContent(), '0 of 10');
    assert.deepEqual((await settingsOf(own.clientId)).budget, { daily: '0.5', monthly: '10' });
  });

  it('saves, previews and removes a voice template beside the SMS ones, and the next call says it', async () => {
    const client = await ownClient('voice client');
    // An app name for {app}, and an SMS template that the voice one must leave alone.
    assert.ok((await cli({ name: 'clients.update', id: client.clientId, change: { appName: 'Acme' } })).ok);
    assert.ok((await cli({ name: 'clients.templates.set', id: client.clientId, locale: 'en', template: 'Your {app} code is {code}' })).ok);
    await t.page.goto(`${t.base}/console/clients/${client.clientId}`);
    await t.page.getByRole('heading', { name: 'Client voice client' }).waitFor();
    // The channel is chosen with the keyboard: the radio group's arrow keys.
    await t.page.getByRole('radio', { name: 'SMS' }).focus();
    await t.page.keyboard.press('ArrowRight');
    assert.equal(await t.page.getByRole('radio', { name: 'Voice' }).isChecked(), true);
    const words = t.page.getByLabel('Words, with {code} (read digit by digit) and {app}');
    await words.fill('Hello from {app}, your code is {code}. Goodbye');
    const nines = [...'9'.repeat(t.server.services.config.OTP_LENGTH)].join(', ');
    await t.page.locator('#preview-sample', { hasText: `Hello from Acme, your code is ${nines}. Goodbye` }).waitFor();
    await words.fill('{code} and {code}');
    await t.page.locator('#preview-problem', { hasText: 'a voice template must contain {code} exactly once' }).waitFor();
    await words.fill('Hello from {app}, your code is {code}. Goodbye');
    await t.page.locator('#preview-sample', { hasText: 'Hello from Acme' }).waitFor();
    await t.page.getByRole('button', { name: 'Save voice template' }).click();
    await t.page.locator('#template-state', { hasText: 'Voice template en saved' }).waitFor();
    await t.page.locator('#templates[data-channel="voice"]', { hasText: 'Hello from {app}' }).waitFor();
    await check(t.page, 'client-voice');
    const saved = await settingsOf(client.clientId);
    assert.deepEqual(saved.voiceTemplates, { en: 'Hello from {app}, your code is {code}. Goodbye' });
    assert.equal((saved.templates as Record<string, string>).en, 'Your {app} code is {code}', 'the SMS template is apart');

    const phone = number();
    const made = await client.create(phone, { type: 'VOICE_CALL', locale: 'en' });
    assert.equal(made.status, 200);
    const call = await lastMessageTo(`+234${phone.slice(1)}`);
    assert.equal(call.channel, 'voice');
    assert.ok(call.text?.startsWith(`Hello from Acme, your code is ${[...String(made.body.data.otp)].join(', ')}. Goodbye`), call.text);

    // Back to SMS: its own list; then voice again, and the voice template removed.
    await t.page.getByRole('radio', { name: 'SMS' }).check();
    await t.page.locator('#templates[data-channel="sms"]').waitFor();
    await t.page.getByRole('radio', { name: 'Voice' }).check();
    await t.page.getByRole('button', { name: 'Remove the en voice template' }).click();
    await t.page.locator('#template-state', { hasText: 'Voice template en removed' }).waitFor();
    await t.page.locator('#no-templates').waitFor();
    assert.deepEqual((await settingsOf(client.clientId)).voiceTemplates, {});
    assert.equal(((await settingsOf(client.clientId)).templates as Record<string, string>).en, 'Your {app} code is {code}');
  });

  it("shows a client's relay hooks, off until turned on, whose secret the relay then takes; rotates it and turns them off", async () => {
    const own = await ownClient('relayed client');
    await t.page.goto(`${t.base}/console/clients/${own.clientId}`);
    await t.page.getByRole('heading', { name: 'Client relayed client' }).waitFor();
    await t.page.getByRole('button', { name: 'Relay hooks' }).click();
    const shown = async (key: string) => (await t.page.locator(`dl.hooks [data-hook="${key}"] code`).textContent()) ?? '';
    await t.page.locator('#relays-state', { hasText: 'Relays are off' }).waitFor();
    assert.equal(await shown('hookSecret'), 'null', 'viewing makes no secret');
    await t.page.getByRole('button', { name: 'Turn relays on' }).click();
    await t.page.locator('#relays-state', { hasText: 'Relays are on' }).waitFor();
    const secret = await shown('hookSecret');
    const supabase = await shown('supabase');
    assert.match(secret, /^v1,whsec_/);
    assert.equal(supabase, `/hooks/supabase/send-sms/${own.clientId}`, 'paths only: PUBLIC_BASE_URL is unset');
    const again = await cli({ name: 'clients.hooks', id: own.clientId });
    assert.ok(again.ok);
    assert.equal((again.value as { hookSecret: string }).hookSecret, secret, 'the CLI prints the same secret');
    // Supabase Auth's Send SMS Hook, signed with the secret the t.page showed: the code goes out.
    const e164 = `+234${number().slice(1)}`;
    const payload = JSON.stringify({ user: { id: randomUUID(), phone: e164.slice(1) }, sms: { otp: '918273', sms_type: 'otp' } });
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const res = await fetch(`${t.base}${supabase}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret.replace('v1,whsec_', '')).sign(id, at, payload),
      },
      body: payload,
    });
    assert.equal(res.status, 200, await res.clone().text());
    const sms = await lastMessageTo(e164);
    assert.match(sms.text ?? '', /918273/);

    // ZITADEL's signing key, kept from the page (write-only): a key that cannot be ZITADEL's is refused in the
    // command's words; a good one is never shown back, and ZITADEL's requests signed with it are taken.
    assert.equal(await shown('zitadelSigningKeySet'), 'false');
    await t.page.getByLabel('The signing key ZITADEL showed', { exact: false }).fill('has spaces in it, so not a key');
    await t.page.getByRole('button', { name: 'Keep the signing key' }).click();
    await t.page.locator('#zitadel-state', { hasText: /^Not kept: zitadelSigningKey must be/ }).waitFor();
    const key = randomBytes(24).toString('base64url');
    await t.page.getByLabel('The signing key ZITADEL showed', { exact: false }).fill(key);
    await t.page.getByRole('button', { name: 'Keep the signing key' }).click();
    await t.page.locator('#zitadel-state', { hasText: 'Signing key kept' }).waitFor();
    assert.equal(await shown('zitadelSigningKeySet'), 'true');
    assert.ok(!(await t.page.content()).includes(key), 'the key is not on the page');
    const zitadelTo = `+234${number().slice(1)}`;
    const zitadelBody = zitadelSmsPayload('otp-sms', { id: '289748723492837001', resourceOwner: '289748723492836001', username: 'ada', phone: zitadelTo }, '55667788');
    const zitadel = await fetch(`${t.base}${await shown('zitadel')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'zitadel-signature': zitadelSignatureHeader(new Date(), zitadelBody, key) },
      body: zitadelBody,
    });
    assert.equal(zitadel.status, 204, await zitadel.clone().text());
    assert.match((await lastMessageTo(zitadelTo)).text ?? '', /55667788/);

    await t.page.getByRole('button', { name: 'Rotate hook secret' }).click();
    await t.page.locator('dl.hooks [data-hook="previousHookSecretExpiresAt"] code', { hasText: /^\d{4}-/ }).waitFor();
    const rotated = await shown('hookSecret');
    assert.match(rotated, /^v1,whsec_/);
    assert.notEqual(rotated, secret);
    await t.page.getByRole('button', { name: 'Turn relays off' }).click();
    await t.page.locator('#relays-state', { hasText: 'Relays are off' }).waitFor();
    assert.equal(await shown('zitadelSigningKeySet'), 'false');
    const audit = await cli({ name: 'audit.list', limit: 5 });
    assert.ok(audit.ok);
    const actions = (audit.value as { action: string; outcome: string }[]).map((e) => `${e.action} ${e.outcome}`);
    assert.ok(actions.includes('clients.hooks ok: disable') && actions.includes('clients.rotate-hook-secret ok'), actions.join('; '));
  });

  it('has no serious accessibility violation and no refused script or style', () => {
    assert.deepEqual(t.violations, []);
    // The 400s of refused settings and templates, and the 401 of a removed passkey, are answers the pages show.
    assert.deepEqual(t.pageErrors.filter((e) => !/status of (400|401|429)/.test(e)), []);
  });
};

if (browserSkip) describe("a client's page of the console in chromium", { skip: browserSkip }, () => undefined);
else forEachDatabase("a client's page of the console in chromium", suite);
