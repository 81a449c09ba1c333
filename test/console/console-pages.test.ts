import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { runAudited } from '../../src/admin/audited.js';
import { runAdminCommand } from '../../src/admin/commands.js';
import { loadConfig } from '../../src/config.js';
import { adminDeps, startServer, type RunningServer } from '../../src/server.js';
import { browserSkip, launchBrowser } from '../support/browser.js';
import { forEachDatabase } from '../support/each-database.js';
import { freshDatabase, type TestDatabase } from '../support/databases.js';
import { startReceiver, verifySignature, waitFor, type Receiver } from '../webhooks/helpers.js';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const password = 'console test password';

/** test-output/console/<name>.png */
function shot(name: string): string {
  const dir = path.resolve('test-output', 'console');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}

/** axe-core's serious and critical violations on the page as it is now (injected by CDP, which the page's CSP does not govern). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(`(() => { ${axeSource}\n; return true })()`);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * Contract 16 in Debian's chromium: the console served by a real server on both databases, an operator made by
 * the CLI's command, real traffic through /v1, webhooks to a real receiver (which checks their signatures with
 * the standardwebhooks package), SMS through the log provider, and a page on another origin for the forged
 * request.
 */
const suite = (kind: 'pglite' | 'postgres') => {
  let db: TestDatabase;
  let server: RunningServer;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  let evil: http.Server;
  let evilUrl: string;
  let token: string;
  let client: { clientId: string; webhookSecret: string };
  const pageErrors: string[] = [];
  const violations: string[] = [];
  const cli = (command: Parameters<typeof runAdminCommand>[1]) => runAudited(adminDeps(server.services), 'cli', command);

  const v1 = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as { data: Record<string, unknown> } };
  };
  let seq = 0;
  /** A local Nigerian number not used before in this suite, under a prefix of its own unless one is given. */
  const number = (prefix = `0803${String(1000 + (seq % 9000)).padStart(4, '0')}`) => {
    seq += 1;
    return `${prefix}${String(seq % 1000).padStart(3, '0')}`;
  };
  const create = async (phoneNumber: string, extra: Record<string, unknown> = {}) =>
    v1('POST', '/v1/otp/request', { countryCode: '+234', phoneNumber, webhookUrl: receiver.url, ...extra });
  /** A client of its own (its settings change nobody else's traffic) and a create with its token. */
  const ownClient = async (name: string) => {
    const made = await server.services.clients.create(name, ['otp:send', 'otp:verify']);
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: made.clientId, client_secret: made.clientSecret }),
    });
    const own = ((await res.json()) as { accessToken: string }).accessToken;
    const createAs = async (phoneNumber: string, extra: Record<string, unknown> = {}) => {
      const r = await fetch(`${base}/v1/otp/request`, {
        method: 'POST',
        headers: { authorization: `Bearer ${own}`, 'content-type': 'application/json' },
        body: JSON.stringify({ countryCode: '+234', phoneNumber, ...extra }),
      });
      return { status: r.status, body: (await r.json()) as { data: Record<string, unknown>; error?: { code: string } } };
    };
    return { clientId: made.clientId, create: createAs };
  };
  const settingsOf = async (clientId: string) => {
    const shown = await cli({ name: 'clients.show', id: clientId });
    assert.ok(shown.ok);
    return (shown.value as { settings: Record<string, unknown> }).settings;
  };

  const newPage = async (ctx: BrowserContext) => {
    const p = await ctx.newPage();
    p.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[13]/.test(m.text())) pageErrors.push(m.text());
    });
    p.on('pageerror', (e) => pageErrors.push(e.message));
    p.on('dialog', (d) => void d.accept());
    return p;
  };
  /** Checks the page as it stands with axe, and saves its screenshot. */
  const check = async (p: Page, name: string) => {
    violations.push(...(await seriousViolations(p)).map((v) => `${name}: ${v}`));
    await p.screenshot({ path: shot(`${name}-${kind}`), fullPage: true });
  };
  const go = async (p: Page, label: string) => {
    await p.getByRole('link', { name: label, exact: true }).click();
    await p.getByRole('heading', { level: 1 }).waitFor();
  };
  const signIn = async (p: Page, email: string) => {
    await p.goto(`${base}/console`);
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
  };

  before(async () => {
    db = await freshDatabase(kind);
    const config = loadConfig({
      ...db.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      CONSOLE: 'true',
      AUTH_FAILURE_LIMIT: '3',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      PHONE_COOLDOWN_SECONDS: '0',
      PREFIX_LIMIT_COUNT: '3',
    });
    server = await startServer(config, { logger: pino({ level: 'silent' }), print: () => undefined });
    // localhost, not 127.0.0.1: a passkey's relying party is a host name, never an address.
    base = server.url.replace('127.0.0.1', 'localhost');
    receiver = await startReceiver();
    const made = await server.services.clients.create('console traffic', ['otp:send', 'otp:verify']);
    client = made;
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: made.clientId, client_secret: made.clientSecret }),
    });
    token = ((await res.json()) as { accessToken: string }).accessToken;
    // Another site: its page tries to change the console from the operator's browser.
    evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        `<!doctype html><title>evil</title><script>
          fetch(${JSON.stringify(`${base}/console/api/clients`)}, { method: 'POST', mode: 'no-cors', credentials: 'include',
            headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ name: 'forged', scopes: ['otp:send'] }) })
            .finally(() => { document.title = 'sent'; });
        </script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await newPage(context);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
    await new Promise((resolve) => evil?.close(resolve));
    await db?.drop();
  });

  it('sets a password from the one-time link, adds a passkey, and signs in with it (a virtual authenticator)', async () => {
    const made = await cli({ name: 'operators.create', email: 'ops@example.com' });
    assert.ok(made.ok);
    const link = (made.value as { link: string }).link.replace(/^http:\/\/localhost:\d+/, base);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await check(page, 'setup');
    await page.getByLabel('New password').fill(password);
    await page.getByLabel('The same again').fill(password);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Add a passkey' }).waitFor();
    assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
    await check(page, 'passkey');
    await page.locator('#add-passkey').click();
    await page.locator('#passkey-state', { hasText: 'Passkey added' }).waitFor({ timeout: 15_000 });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await check(page, 'sign-in');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor({ timeout: 15_000 });
    const ops = await cli({ name: 'operators.list' });
    assert.ok(ops.ok);
    assert.equal((ops.value as { email: string; passkeys: number }[]).find((o) => o.email === 'ops@example.com')?.passkeys, 1);
  });

  it('draws the overview from real traffic, with the figures of /v1/stats', async () => {
    // Traffic: verified, left pending, and a wrong code, over SMS.
    for (let i = 0; i < 5; i += 1) {
      const made = await create(number());
      assert.equal(made.status, 200);
      if (i < 3) assert.equal((await v1('POST', '/v1/otp/verify', { id: made.body.data.id, otp: made.body.data.otp })).status, 200);
    }
    const stats = await v1('GET', '/v1/stats');
    const rows = stats.body.data as unknown as { day: string; sends: number; delivered: number; verified: number }[];
    const today = rows.filter((r) => r.day === new Date().toISOString().slice(0, 10));
    const want = today.reduce((t, r) => ({ sends: t.sends + r.sends, delivered: t.delivered + r.delivered, verified: t.verified + r.verified }), { sends: 0, delivered: 0, verified: 0 });
    assert.ok(want.sends >= 5 && want.verified >= 3);

    await page.goto(`${base}/console`);
    const row = page.locator(`#figures-day tr[data-key="${new Date().toISOString().slice(0, 10)}"]`);
    await row.waitFor();
    const shown = { sends: 0, delivered: 0, verified: 0 };
    for (const field of ['sends', 'delivered', 'verified'] as const) shown[field] = Number(await row.locator(`[data-field="${field}"]`).textContent());
    assert.deepEqual(shown, want, 'the console shows what /v1/stats counts');
    const ng = page.locator('#figures-country tr[data-key="NG"] [data-field="sends"]');
    assert.equal(Number(await ng.textContent()), want.sends);
    const viaLog = page.locator('#figures-provider tr[data-key="SMS log"] [data-field="sends"]');
    assert.equal(Number(await viaLog.textContent()), want.sends, 'every send went through the log provider');
    // Each chart drew on its canvas: some pixels are not blank.
    for (const id of ['chart-traffic', 'chart-conversion', 'chart-country', 'chart-channel', 'chart-provider']) {
      const inked = await page.locator(`#${id} canvas`).first().evaluate((c: HTMLCanvasElement) => {
        const d = c.getContext('2d')?.getImageData(0, 0, c.width, c.height).data ?? new Uint8ClampedArray();
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if ((d[i] ?? 0) > 0) n += 1;
        return n;
      });
      assert.ok(inked > 500, `${id} drew something (${inked} pixels)`);
      const series = JSON.parse((await page.locator(`#${id}`).getAttribute('data-series')) ?? '[]') as { label: string; values: number[] }[];
      if (id === 'chart-traffic') assert.deepEqual(series.map((s) => s.values.at(-1)), [want.sends, want.delivered, want.verified]);
    }
    await check(page, 'overview');
  });

  it('finds a verification by number with its whole life, and replays its webhook to the receiver', async () => {
    const phone = number();
    const made = await create(phone);
    const id = String(made.body.data.id);
    await v1('POST', '/v1/otp/verify', { id, otp: made.body.data.otp });
    const first = await waitFor('the first webhook', () => receiver.requests.find((r) => r.body.includes(id) && r.body.includes('SUCCESS')));
    verifySignature(client.webhookSecret, first);
    const before = receiver.requests.filter((r) => r.body.includes(id)).length;

    await go(page, 'Verifications');
    await page.getByLabel('Id, number (+2348031234567) or reference').fill(`+234${phone.slice(1)}`);
    await page.getByRole('button', { name: 'Find' }).click();
    const found = page.locator(`article[data-verification-id="${id}"]`);
    await found.waitFor();
    assert.match((await found.locator('.status').textContent()) ?? '', /SUCCESS/);
    assert.ok((await found.locator('li.webhook').count()) >= 1);
    await check(page, 'verifications');
    const event = found.locator('li.webhook', { hasText: 'SUCCESS' }).first();
    await event.getByRole('button', { name: /^Replay/ }).click();
    await event.getByRole('status').filter({ hasText: 'Replayed' }).waitFor();
    const replayed = await waitFor('the replayed webhook', () => {
      const all = receiver.requests.filter((r) => r.body.includes(id));
      return all.length > before ? all.at(-1) : undefined;
    });
    verifySignature(client.webhookSecret, replayed);
    assert.equal(replayed.headers['webhook-id'], first.headers['webhook-id'], 'the same event, sent again');
  });

  it("changes a client's template with a live preview, and the next SMS uses it", async () => {
    await go(page, 'Clients');
    await page.locator(`tr[data-client-id="${client.clientId}"] a`).click();
    await page.getByRole('heading', { name: 'Client console traffic' }).waitFor();
    await page.getByLabel('App name ({app} in texts)').fill('Acme');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved' }).waitFor();
    const text = page.getByLabel('Text, with {code}, {minutes} and {app}');
    await text.fill('Your {app} code is {code}');
    await page.locator('#preview-sample', { hasText: /^Your Acme code is \d+/ }).waitFor();
    assert.equal(await page.locator('#preview-encoding').textContent(), 'GSM-7');
    assert.equal(await page.locator('#preview-parts').textContent(), '1');
    await text.fill('Votre code {app} : {code} — merci ✓');
    await page.locator('#preview-encoding', { hasText: 'UCS-2' }).waitFor();
    await text.fill('no code here');
    await page.locator('#preview-problem').waitFor();
    await text.fill('Your {app} code is {code}');
    await page.locator('#preview-encoding', { hasText: 'GSM-7' }).waitFor();
    await page.getByRole('button', { name: 'Save SMS template' }).click();
    await page.locator('#template-state', { hasText: 'saved' }).waitFor();
    await check(page, 'client');

    const phone = number();
    // A create in English: without a locale (and no default locale) the text is the service's own default.
    const made = await create(phone, { locale: 'en' });
    assert.equal(made.status, 200);
    const sms = await waitFor('the SMS', async () => {
      const latest = await runAdminCommand(adminDeps(server.services), { name: 'messages.latest', to: `+234${phone.slice(1)}`, limit: 5 });
      return latest.ok ? (latest.value as { text?: string }[])[0] : undefined;
    });
    assert.equal(sms.text, `Your Acme code is ${String(made.body.data.otp)}`);

    // A test number added on the page: its fixed code, and no provider.
    const testPhone = `+234${number().slice(1)}`;
    await page.getByLabel('Number (E.164)').fill(testPhone);
    await page.getByLabel('Its fixed code').fill('424242');
    await page.getByRole('button', { name: 'Add test number' }).click();
    await page.getByRole('button', { name: `Remove test number ${testPhone}` }).waitFor();
    const fixed = await create(`0${testPhone.slice(4)}`);
    assert.equal(fixed.status, 200);
    assert.equal(fixed.body.data.otp, '424242');

    await go(page, 'Clients');
    await check(page, 'clients');
  });

  it('saves every setting clients update takes, shows a refusal in its own words, and /v1 follows them', async () => {
    const own = await ownClient('settings client');
    await page.goto(`${base}/console/clients/${own.clientId}`);
    await page.getByRole('heading', { name: 'Client settings client' }).waitFor();
    // A refusal: the command's own message beside the form, and nothing saved.
    await page.getByLabel('Then, in order', { exact: false }).fill('CARRIER_PIGEON');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const problem = page.locator('#settings-problem');
    await problem.waitFor();
    assert.match((await problem.textContent()) ?? '', /^Not saved: --fallback takes request types from .*; not CARRIER_PIGEON$/);
    assert.deepEqual((await settingsOf(own.clientId)).fallback, [], 'a refused change saves nothing');

    await page.getByLabel('Default locale', { exact: false }).fill('fr-ca');
    await page.getByLabel('WebOTP domain', { exact: false }).fill('Example.com');
    await page.getByLabel('Android app hash', { exact: false }).fill('FA+9qCX9VSu');
    await page.getByLabel('Then, in order', { exact: false }).fill('voice_call');
    await page.getByLabel('Next step after', { exact: false }).fill('45');
    await page.getByLabel('Provider', { exact: true }).selectOption('turnstile');
    await page.getByLabel('Secret key', { exact: false }).fill('0x4AAAAAAAturnstile-secret');
    await page.getByLabel('Minimum score', { exact: false }).fill('0.7');
    await page.getByLabel('Ask for a token').selectOption('always');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('#settings-state', { hasText: 'Settings saved' }).waitFor();
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

    // The page again: the secret shown masked, never in a field; saved again empty, it is kept.
    await page.reload();
    await page.getByRole('heading', { name: 'Client settings client' }).waitFor();
    assert.match((await page.locator('label[for="captcha-secret"]').textContent()) ?? '', /now 0x4A… \(26 characters\); empty: kept/);
    assert.equal(await page.getByLabel('Secret key', { exact: false }).inputValue(), '');
    assert.equal(await page.getByLabel('Next step after', { exact: false }).inputValue(), '45');
    // The keyboard reaches every new field in order.
    await page.getByLabel('Android app hash', { exact: false }).focus();
    for (const next of ['fallback', 'fallback-after', 'captcha-provider', 'captcha-secret', 'captcha-min-score', 'captcha-when']) {
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.id), next);
    }
    await page.getByLabel('Minimum score', { exact: false }).fill('0.6');
    await page.getByLabel('Ask for a token').selectOption('throttled');
    await page.getByRole('button', { name: 'Save settings' }).click();
    // The status said "saved" already: the change is awaited where it lands.
    await waitFor('the second save', async () => ((await settingsOf(own.clientId)).captcha as { when: string }).when === 'throttled' || undefined);
    await page.locator('#settings-state', { hasText: 'Settings saved' }).waitFor();
    assert.deepEqual((await settingsOf(own.clientId)).captcha, { provider: 'turnstile', secret: '0x4A… (26 characters)', minScore: 0.6, when: 'throttled' });
    await check(page, 'client-settings');

    // CAPTCHA only when throttled: nothing is, so the create passes, and its record carries the workflow.
    const made = await own.create(number());
    assert.equal(made.status, 200);
    assert.deepEqual(made.body.data.fallback, ['VOICE_CALL']);
    await page.getByLabel('Provider', { exact: true }).selectOption('none');
    await page.getByLabel('Then, in order', { exact: false }).fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await waitFor('the third save', async () => (await settingsOf(own.clientId)).captcha === null || undefined);
    const cleared = await settingsOf(own.clientId);
    assert.deepEqual([cleared.captcha, cleared.fallback], [null, []]);
    assert.deepEqual((await own.create(number())).body.data.fallback, []);
  });

  it("saves, previews and removes a voice template beside the SMS ones, and the next call says it", async () => {
    await page.goto(`${base}/console/clients/${client.clientId}`);
    await page.getByRole('heading', { name: 'Client console traffic' }).waitFor();
    // The channel is chosen with the keyboard: the radio group's arrow keys.
    await page.getByRole('radio', { name: 'SMS' }).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getByRole('radio', { name: 'Voice' }).isChecked(), true);
    const words = page.getByLabel('Words, with {code} (read digit by digit) and {app}');
    await words.fill('Hello from {app}, your code is {code}. Goodbye');
    const nines = [...'9'.repeat(server.services.config.OTP_LENGTH)].join(', ');
    await page.locator('#preview-sample', { hasText: `Hello from Acme, your code is ${nines}. Goodbye` }).waitFor();
    await words.fill('{code} and {code}');
    await page.locator('#preview-problem', { hasText: 'a voice template must contain {code} exactly once' }).waitFor();
    await words.fill('Hello from {app}, your code is {code}. Goodbye');
    await page.locator('#preview-sample', { hasText: 'Hello from Acme' }).waitFor();
    await page.getByRole('button', { name: 'Save voice template' }).click();
    await page.locator('#template-state', { hasText: 'Voice template en saved' }).waitFor();
    await page.locator('#templates[data-channel="voice"]', { hasText: 'Hello from {app}' }).waitFor();
    await check(page, 'client-voice');
    const saved = await settingsOf(client.clientId);
    assert.deepEqual(saved.voiceTemplates, { en: 'Hello from {app}, your code is {code}. Goodbye' });
    assert.equal((saved.templates as Record<string, string>).en, 'Your {app} code is {code}', 'the SMS template is apart');

    const phone = number();
    const made = await create(phone, { type: 'VOICE_CALL', locale: 'en' });
    assert.equal(made.status, 200);
    const call = await waitFor('the call', async () => {
      const latest = await runAdminCommand(adminDeps(server.services), { name: 'messages.latest', to: `+234${phone.slice(1)}`, limit: 5 });
      return latest.ok ? (latest.value as { text?: string; channel?: string }[])[0] : undefined;
    });
    assert.equal(call.channel, 'voice');
    assert.ok(call.text?.startsWith(`Hello from Acme, your code is ${[...String(made.body.data.otp)].join(', ')}. Goodbye`), call.text);

    // Back to SMS: its own list; then voice again, and the voice template removed.
    await page.getByRole('radio', { name: 'SMS' }).check();
    await page.locator('#templates[data-channel="sms"]').waitFor();
    await page.getByRole('radio', { name: 'Voice' }).check();
    await page.getByRole('button', { name: 'Remove the en voice template' }).click();
    await page.locator('#template-state', { hasText: 'Voice template en removed' }).waitFor();
    await page.locator('#no-templates').waitFor();
    assert.deepEqual((await settingsOf(client.clientId)).voiceTemplates, {});
    assert.equal(((await settingsOf(client.clientId)).templates as Record<string, string>).en, 'Your {app} code is {code}');
  });

  it("shows a client's relay hooks, whose secret the relay then takes", async () => {
    const own = await ownClient('relayed client');
    await page.goto(`${base}/console/clients/${own.clientId}`);
    await page.getByRole('heading', { name: 'Client relayed client' }).waitFor();
    await page.getByRole('button', { name: 'Relay hooks' }).click();
    const shown = async (key: string) => (await page.locator(`dl.hooks [data-hook="${key}"] code`).textContent()) ?? '';
    await page.locator('dl.hooks [data-hook="hookSecret"]').waitFor();
    const secret = await shown('hookSecret');
    const supabase = await shown('supabase');
    assert.match(secret, /^v1,whsec_/);
    assert.equal(supabase, `/hooks/supabase/send-sms/${own.clientId}`, 'paths only: PUBLIC_BASE_URL is unset');
    const again = await cli({ name: 'clients.hooks', id: own.clientId });
    assert.ok(again.ok);
    assert.equal((again.value as { hookSecret: string }).hookSecret, secret, 'the CLI prints the same secret');
    // Supabase Auth's Send SMS Hook, signed with the secret the page showed: the code goes out.
    const e164 = `+234${number().slice(1)}`;
    const payload = JSON.stringify({ user: { id: randomUUID(), phone: e164.slice(1) }, sms: { otp: '918273', sms_type: 'otp' } });
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const res = await fetch(`${base}${supabase}`, {
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
    const sms = await waitFor('the relayed SMS', async () => {
      const latest = await runAdminCommand(adminDeps(server.services), { name: 'messages.latest', to: e164, limit: 5 });
      return latest.ok ? (latest.value as { text?: string }[])[0] : undefined;
    });
    assert.match(sms.text ?? '', /918273/);
  });

  it('creates a client, rotates its secret and disables it, each seen at the token endpoint', async () => {
    const tokenWith = (clientId: string, secret: string) =>
      fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
      }).then((r) => r.status);
    await go(page, 'Clients');
    await page.getByLabel('Name').fill('made in the console');
    await page.getByRole('button', { name: 'Create client' }).click();
    const secrets = page.locator('.secrets');
    await secrets.waitFor();
    const clientId = (await secrets.locator('[data-secret="clientId"]').textContent()) ?? '';
    const secret = (await secrets.locator('[data-secret="clientSecret"]').textContent()) ?? '';
    assert.equal(await tokenWith(clientId, secret), 200, 'the secret shown works');
    await page.locator(`tr[data-client-id="${clientId}"]`).waitFor();
    await page.getByRole('link', { name: 'Open the new client' }).click();
    await page.getByRole('heading', { name: 'Client made in the console' }).waitFor();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.locator('[data-secret="clientSecret"]').textContent()) ?? '';
    assert.notEqual(rotated, secret);
    assert.equal(await tokenWith(clientId, secret), 401, 'the old secret stopped working');
    assert.equal(await tokenWith(clientId, rotated), 200);
    await page.getByRole('button', { name: 'Disable client' }).click();
    await page.locator('#client-state', { hasText: 'disabled' }).waitFor();
    assert.equal(await tokenWith(clientId, rotated), 401, 'a disabled client gets no token');
  });

  it('lifts a prefix block, after which the prefix takes creates again', async () => {
    const prefix = '08095551';
    for (let i = 0; i < 3; i += 1) assert.equal((await create(number(prefix))).status, 200);
    assert.equal((await create(number(prefix))).status, 403, 'the 4th within the window is blocked (PREFIX_LIMIT_COUNT=3)');
    await go(page, 'Fraud');
    const row = page.locator('tr[data-block="+2348095551"]');
    await row.waitFor();
    await check(page, 'fraud');
    await row.getByRole('button', { name: 'Lift +2348095551' }).click();
    await page.locator('#fraud-state', { hasText: 'Lifted +2348095551' }).waitFor();
    await row.waitFor({ state: 'detached' });
    assert.equal((await create(number(prefix))).status, 200, 'creates count afresh from the lift');

    // A number put on the block list from the page is refused, and taken again once removed.
    const blocked = number();
    await page.getByLabel('Number or prefix (+2348030)').fill(`+234${blocked.slice(1)}`);
    await page.getByLabel('Note').fill('reported by support');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.locator('#fraud-state', { hasText: 'Added' }).waitFor();
    const refused = await create(blocked);
    assert.equal(refused.status, 403);
    await page.getByRole('button', { name: `Remove +234${blocked.slice(1)} from the block list` }).click();
    await page.locator('#fraud-state', { hasText: 'Removed' }).waitFor();
    assert.equal((await create(blocked)).status, 200);
  });

  it('lifts a country throttle and a client throttle on the fraud page, after which creates pass', async () => {
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
    await server.services.conversionStore.throttle(
      [{ regionCode: 'GH', countryCode: String(first.body.data.countryCode), provider: 'log', sends: 250, delivered: 0, verified: 3 }],
      now,
      until,
    );
    await server.services.conversionStore.throttleClients([{ clientId: throttled.clientId, sends: 300, verified: 0 }], now, until);
    await server.services.conversion.refresh();
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

    // Loaded afresh: the page is the fraud page already, from the test before.
    await page.goto(`${base}/console/fraud`);
    const country = page.locator('tr[data-block="GH"]');
    const client = page.locator(`tr[data-block="${throttled.clientId}"]`);
    await country.waitFor();
    await client.waitFor();
    assert.match((await country.textContent()) ?? '', /GH \(\+?233\) via log: 3\/250 verified, throttled/);
    assert.match((await client.textContent()) ?? '', /0\/300 verified across all countries, throttled/);
    await check(page, 'fraud-throttles');
    await country.getByRole('button', { name: 'Lift GH' }).click();
    await page.locator('#fraud-state', { hasText: 'Lifted GH' }).waitFor();
    await country.waitFor({ state: 'detached' });
    assert.equal((await towardsGhana.create('', ghana())).status, 200, 'Ghana takes creates again');
    await client.getByRole('button', { name: `Lift ${throttled.clientId}` }).click();
    await page.locator('#fraud-state', { hasText: `Lifted ${throttled.clientId}` }).waitFor();
    await client.waitFor({ state: 'detached' });
    assert.equal((await throttled.create(number())).status, 200, 'the client takes creates again');
    const listed = await cli({ name: 'blocks.list' });
    assert.ok(listed.ok);
    assert.deepEqual((listed.value as { country?: string; clientId?: string }[]).filter((b) => b.country === 'GH' || b.clientId === throttled.clientId), []);
  });

  it('shows the providers with their circuit state and delivery rate, and the audit log', async () => {
    await go(page, 'Providers');
    const log = page.locator('#providers tr[data-provider="log"][data-channel="sms"]');
    await log.waitFor();
    assert.match((await log.textContent()) ?? '', /closed/);
    await check(page, 'providers');
    await go(page, 'Audit log');
    const rows = page.locator('#audit tbody tr');
    await rows.first().waitFor();
    const text = (await page.locator('#audit').textContent()) ?? '';
    for (const action of ['blocks.lift', 'lists.add', 'lists.remove', 'clients.create', 'clients.rotate-secret', 'clients.disable', 'clients.templates.set', 'clients.test-numbers.add', 'clients.update', 'webhooks.replay', 'console.add-passkey', 'operators.create']) {
      assert.ok(text.includes(action), `the audit page lists ${action}`);
    }
    assert.ok(text.includes('operator:ops@example.com'));
    await check(page, 'audit');
  });

  it('shows an open circuit on the providers page once the SMS provider failed five sends in a row', async () => {
    // The log provider stands in for a gateway that answers 503 to these numbers (as the delivery tests' scripted
    // provider does): the send worker records each failure on the server's own circuit breaker.
    const [log] = server.services.providers.forChannel('sms');
    assert.ok(log);
    const failing = new Set<string>();
    const send = log.send.bind(log);
    log.send = async (message, signal) => (failing.has(message.to) ? { kind: 'transient', reason: 'gateway 503' } : send(message, signal));
    try {
      for (let i = 0; i < 5; i += 1) {
        const phone = number();
        failing.add(`+234${phone.slice(1)}`);
        assert.equal((await create(phone)).status, 200);
      }
      await waitFor('the circuit to open', async () => {
        const status = await cli({ name: 'providers.status' });
        return status.ok && (status.value as { channel: string; provider: string; circuit: string }[]).some((p) => p.channel === 'sms' && p.provider === 'log' && p.circuit === 'open');
      });
      await go(page, 'Providers');
      const row = page.locator('#providers tr[data-provider="log"][data-channel="sms"]');
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', /open until \d{4}-\d\d-\d\dT/);
      await check(page, 'providers-open');
    } finally {
      log.send = send;
    }
  });

  it("changes an operator's own password (with the current one) and removes their passkey, audited and CSRF-protected", async () => {
    const made = await cli({ name: 'operators.create', email: 'self@example.com' });
    assert.ok(made.ok);
    const setUp = await fetch(`${base}/console/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ token: (made.value as { link: string }).link.split('#')[1], password }),
    });
    assert.equal(setUp.status, 200);
    const signInWith = (pw: string) =>
      fetch(`${base}/console/api/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ email: 'self@example.com', password: pw }),
      });
    // Another session of the same operator (another browser): it ends when the password changes.
    const other = (await signInWith(password)).headers.get('set-cookie')?.split(';')[0] ?? '';
    const otherAlive = async () => (await fetch(`${base}/console/api/session`, { headers: { cookie: other } })).status;
    assert.equal(await otherAlive(), 200);

    const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const p = await newPage(ctx);
    const cdp = await ctx.newCDPSession(p);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await signIn(p, 'self@example.com');
    await p.goto(`${base}/console/passkey`);
    await p.locator('#add-passkey').click();
    await p.locator('#passkey-state', { hasText: 'Passkey added' }).waitFor({ timeout: 15_000 });

    await p.getByRole('link', { name: 'self@example.com (your account)' }).click();
    await p.getByRole('heading', { name: 'Your account' }).waitFor();
    const rows = p.locator('#passkeys tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1);
    await check(p, 'account');

    // A wrong current password: refused in the page, and nothing changed.
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
    assert.equal((await p.request.get(`${base}/console/api/session`)).status(), 200, 'the session that changed it goes on');
    // Without the CSRF token, from the operator's own browser: refused.
    const forged = await ctx.request.post(`${base}/console/api/account/password`, { data: { current: 'a brand new password', password: 'forged password 123' }, headers: { origin: base } });
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

  it('refuses a forged cross-site request, and a change without the CSRF token', async () => {
    const before = await cli({ name: 'clients.list' });
    const other = await newPage(context);
    await other.goto(evilUrl);
    await other.waitForFunction(() => document.title === 'sent');
    await other.close();
    const viaRequest = await context.request.post(`${base}/console/api/clients`, {
      data: { name: 'forged', scopes: ['otp:send'] },
      headers: { origin: evilUrl.replace(/\/$/, '') },
    });
    assert.equal(viaRequest.status(), 403, 'the session cookie, from another origin');
    const noToken = await context.request.post(`${base}/console/api/clients`, { data: { name: 'forged', scopes: ['otp:send'] }, headers: { origin: base } });
    assert.equal(noToken.status(), 403, 'the session cookie, the right origin, no CSRF token');
    assert.equal(((await noToken.json()) as { error: { code: string } }).error.code, 'CSRF_REFUSED');
    const afterList = await cli({ name: 'clients.list' });
    assert.ok(before.ok && afterList.ok);
    assert.equal((afterList.value as unknown[]).length, (before.value as unknown[]).length, 'no client was made');
  });

  it('refuses a session cookie copied to another browser once its operator signed out', async () => {
    const thief = await browser.newContext();
    await thief.addCookies(await context.cookies(base));
    const stolen = await thief.request.get(`${base}/console/api/session`);
    assert.equal(stolen.status(), 200, 'the copy works while the session lives');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    const after = await thief.request.get(`${base}/console/api/session`);
    assert.equal(after.status(), 401, 'and not after sign-out');
    const thiefPage = await newPage(thief);
    await thiefPage.goto(`${base}/console/clients`);
    await thiefPage.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await thief.close();
  });

  it('slows failed sign-ins down, and signs in with the password', async () => {
    await page.goto(`${base}/console`);
    for (let i = 0; i < 3; i += 1) {
      await page.getByLabel('Email').fill('ops@example.com');
      await page.getByLabel('Password').fill(`wrong guess ${i}`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'wrong' }).waitFor();
    }
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Too many failed sign-ins' }).waitFor();
    // Another address is not slowed: a fresh browser context is the same address here, so the operator's own
    // password sign-in is shown with a second operator.
    const made = await cli({ name: 'operators.create', email: 'second@example.com' });
    assert.ok(made.ok);
    const res = await fetch(`${base}/console/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ token: (made.value as { link: string }).link.split('#')[1], password }),
    });
    assert.equal(res.status, 200);
    await signIn(page, 'second@example.com');
  });

  it('works with the keyboard alone: focus order, visible focus, labelled controls', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const p = await newPage(ctx);
    const focused = () => p.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      const label = el?.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null;
      return { tag: el?.tagName ?? '', text: (label ?? el?.textContent ?? '').trim(), outline: el ? getComputedStyle(el).outlineStyle : 'none' };
    });
    const focusOn = (text: string) =>
      p.waitForFunction((t) => document.activeElement?.textContent?.trim() === t, text, { timeout: 10_000 }).then(() => undefined);
    await p.goto(`${base}/console`);
    await p.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await p.keyboard.press('Tab');
    assert.deepEqual(await focused(), { tag: 'INPUT', text: 'Email', outline: 'solid' }, 'the first stop is the email, with a visible focus ring');
    await p.keyboard.type('second@example.com');
    await p.keyboard.press('Tab');
    assert.equal((await focused()).text, 'Password');
    await p.keyboard.type(password);
    await p.keyboard.press('Enter');
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    // Focus moves to the heading once the page has drawn (an effect after the render): polled, not raced.
    await focusOn('Overview');
    assert.equal((await focused()).text, 'Overview', 'signed in, focus is on the page heading');
    await p.keyboard.press('Tab');
    assert.equal((await focused()).text, 'Days shown', 'then on the page\'s first control');
    await p.reload();
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    await p.keyboard.press('Tab');
    assert.equal((await focused()).text, 'Skip to the page', 'a skip link comes first');
    await p.keyboard.press('Tab');
    assert.deepEqual(await focused(), { tag: 'A', text: 'Overview', outline: 'solid' });
    await p.keyboard.press('Tab');
    assert.equal((await focused()).text, 'Verifications');
    await p.keyboard.press('Enter');
    await p.getByRole('heading', { name: 'Verifications' }).waitFor();
    await focusOn('Verifications');
    await p.keyboard.press('Tab');
    assert.equal((await focused()).text, 'Id, number (+2348031234567) or reference', 'focus moved to the new page: its first field is next');
    await p.keyboard.type('no-such-reference');
    await p.keyboard.press('Enter');
    await p.locator('#found-count', { hasText: 'No verification found' }).waitFor();
    await ctx.close();
  });

  it('has no serious accessibility violation and no refused script or style on any page', () => {
    assert.deepEqual(violations, []);
    assert.deepEqual(pageErrors.filter((e) => /Content Security Policy|Refused/.test(e)), []);
    // The 401s of failed sign-ins, the 429 after them, and the 400 of a template without {code} are answers the
    // pages show; anything else the browser logged is a fault.
    assert.deepEqual(pageErrors.filter((e) => !/status of (400|401|429)/.test(e)), []);
  });
};

if (browserSkip) describe('the console in chromium', { skip: browserSkip }, () => undefined);
else forEachDatabase('the console in chromium', suite);
