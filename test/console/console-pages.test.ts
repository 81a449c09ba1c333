import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Big from 'big.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { type RunningServer } from '../../src/server.js';
import { operatorCommand } from '../support/api.js';
import { browserSkip } from '../support/browser.js';
import { forEachDatabase } from '../support/each-database.js';
import { startReceiver, verifySignature, waitFor, type Receiver } from '../webhooks/helpers.js';
import { consoleInBrowser, password } from './in-browser.js';

/** A port free now, for a server that must know its own address before it listens. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Contract 16 in Debian's chromium: the console served by a real server on both databases, an operator made by
 * the CLI's command, real traffic through /v1, webhooks to a real receiver (which checks their signatures with
 * the standardwebhooks package), SMS through the log provider and, for the numbers a route sends there, through
 * an operator's gateway (the `http` provider) that charges what the price sheet says, and a page on another
 * origin for the forged request.
 */
const suite = (kind: 'pglite' | 'postgres') => {
  // The gateway and the settings that name it, made before the server starts (hooks run in the order given). The
  // log provider's sends cost nothing whatever the prices say: the gateway reports no price, so its are priced.
  // Its receipts would come back to PUBLIC_BASE_URL, which is then the console's origin too: the server's own.
  const env: Record<string, string> = {
    AUTH_FAILURE_LIMIT: '3',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    SMS_PROVIDER: 'log,http',
    HTTP_GATEWAY_SECRET: `whsec_${Buffer.from('the console tests gateway secret').toString('base64')}`,
  };
  const gatewaySends: string[] = [];
  const gateway = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      gatewaySends.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${gatewaySends.length}` }));
    });
  });
  before(async () => {
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    env.HTTP_GATEWAY_URL = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/send`;
    const port = await freePort();
    env.PORT = String(port);
    env.PUBLIC_BASE_URL = `http://localhost:${port}`;
  });
  after(() => new Promise((resolve) => gateway.close(resolve)));
  const { t, cli, newPage, check, go, signIn, clock } = consoleInBrowser(kind, { env, signedIn: null });
  const { pageErrors, violations } = t;
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

  before(async () => {
    ({ server, base, browser, context, page } = t);
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
  });
  after(async () => {
    await receiver?.close();
    await new Promise((resolve) => evil?.close(resolve));
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
    // A price for the gateway, and a route to it for numbers under +2348105550 (the rest go through the log provider).
    const csv = 'provider,channel,destination,currency,price\nhttp,sms,default,USD,0.01\n';
    assert.ok((await cli({ name: 'prices.import', csv, file: 'prices.csv' })).ok);
    assert.ok((await cli({ name: 'routes.set', channel: 'sms', destination: '+2348105550', providers: ['http'] })).ok);
    // Traffic: verified, left pending, and a wrong code, over SMS; two more through the gateway, one verified.
    for (let i = 0; i < 5; i += 1) {
      const made = await create(number());
      assert.equal(made.status, 200);
      if (i < 3) assert.equal((await v1('POST', '/v1/otp/verify', { id: made.body.data.id, otp: made.body.data.otp })).status, 200);
    }
    for (let i = 0; i < 2; i += 1) {
      const made = await create(number('08105550'));
      assert.equal(made.status, 200);
      if (i < 1) assert.equal((await v1('POST', '/v1/otp/verify', { id: made.body.data.id, otp: made.body.data.otp })).status, 200);
    }
    const day = new Date().toISOString().slice(0, 10);
    type StatsRow = { day: string; sends: number; delivered: number; verified: number; cost: string };
    // A send is priced when the gateway takes it, after the create answered.
    const rows = await waitFor('the gateway sends priced', async () => {
      const all = (await v1('GET', '/v1/stats')).body.data as unknown as StatsRow[];
      return all.filter((r) => r.day === day).reduce((sum, r) => sum.plus(r.cost), new Big(0)).eq('0.02') && all;
    });
    assert.equal(gatewaySends.length, 2);
    const today = rows.filter((r) => r.day === day);
    const want = today.reduce((t, r) => ({ sends: t.sends + r.sends, delivered: t.delivered + r.delivered, verified: t.verified + r.verified }), { sends: 0, delivered: 0, verified: 0 });
    assert.ok(want.sends >= 7 && want.verified >= 4);
    // The day's spend over its verified codes, as the service divides it (6 decimals, half up).
    const perVerified = new Big('0.02').div(want.verified).round(6, Big.roundHalfUp).toFixed();

    await page.goto(`${base}/console`);
    const row = page.locator(`#figures-day tr[data-key="${day}"]`);
    await row.waitFor();
    const shown = { sends: 0, delivered: 0, verified: 0 };
    for (const field of ['sends', 'delivered', 'verified'] as const) shown[field] = Number(await row.locator(`[data-field="${field}"]`).textContent());
    assert.deepEqual(shown, want, 'the console shows what /v1/stats counts');
    const ng = page.locator('#figures-country tr[data-key="NG"] [data-field="sends"]');
    assert.equal(Number(await ng.textContent()), want.sends);
    const viaLog = page.locator('#figures-provider tr[data-key="SMS log"] [data-field="sends"]');
    assert.equal(Number(await viaLog.textContent()), want.sends - 2, 'every send but the gateway\'s went through the log provider');
    // What the sends cost, in the currency the server names, summed exactly, as text.
    assert.equal(await row.locator('[data-field="cost"]').textContent(), '0.02');
    assert.equal(await row.locator('[data-field="costPerVerified"]').textContent(), perVerified);
    assert.equal(await page.locator('#figures-provider tr[data-key="SMS http"] [data-field="cost"]').textContent(), '0.02');
    assert.equal(await page.locator(`#figures-spend-country tr[data-key="${day}"] td[data-series="NG"]`).textContent(), '0.02');
    assert.equal(await page.locator(`#figures-spend-provider tr[data-key="${day}"] td[data-series="SMS http"]`).textContent(), '0.02');
    assert.equal(await page.locator(`#figures-spend-provider tr[data-key="${day}"] td[data-series="SMS log"]`).textContent(), '0');
    assert.equal(await page.locator('#figures-spend-provider tr[data-key="total"] td[data-series="SMS http"]').textContent(), '0.02');
    for (const id of ['chart-spend-country', 'chart-spend-provider', 'chart-cost-per-verified']) {
      assert.match((await page.locator(`#${id}-title`).textContent()) ?? '', /, USD$/, `${id} names the currency`);
    }
    // Each chart drew on its canvas: some pixels are not blank.
    for (const id of ['chart-traffic', 'chart-conversion', 'chart-country', 'chart-channel', 'chart-provider', 'chart-spend-country', 'chart-spend-provider', 'chart-cost-per-verified']) {
      const inked = await page.locator(`#${id} canvas`).first().evaluate((c: HTMLCanvasElement) => {
        const d = c.getContext('2d')?.getImageData(0, 0, c.width, c.height).data ?? new Uint8ClampedArray();
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if ((d[i] ?? 0) > 0) n += 1;
        return n;
      });
      assert.ok(inked > 500, `${id} drew something (${inked} pixels)`);
      const series = JSON.parse((await page.locator(`#${id}`).getAttribute('data-series')) ?? '[]') as { label: string; values: number[] }[];
      if (id === 'chart-traffic') assert.deepEqual(series.map((s) => s.values.at(-1)), [want.sends, want.delivered, want.verified]);
      if (id === 'chart-spend-country') assert.deepEqual(series.map((s) => [s.label, s.values.at(-1)]), [['NG', 0.02]]);
      if (id === 'chart-spend-provider') assert.deepEqual(series.find((s) => s.label === 'SMS http')?.values.at(-1), 0.02);
      // No verified code before today in this suite: no point on those days.
      if (id === 'chart-cost-per-verified') assert.deepEqual(series[0]?.values, [...Array<null>(6).fill(null), Number(perVerified)]);
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
    assert.equal(await found.locator('dd.risk').textContent(), 'allow', 'no rule objected to it');
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
    // The refused create is in the prefix rule's verdicts (the page read them again after the lift).
    assert.match((await page.locator('#rules tr[data-rule="prefix"] td.refused').textContent()) ?? '', /^[1-9]/);
    await page.getByLabel('Mode of device').selectOption('shadow');
    await page.locator('#fraud-state', { hasText: 'Rule device: shadow for every client.' }).waitFor();
    const rules = (await operatorCommand(server.services, { name: 'rules.list' })) as { rule: string; mode: string }[];
    assert.equal(rules.find((r) => r.rule === 'device')?.mode, 'shadow');
    await page.getByLabel('Mode of device').selectOption('enforce');
    await page.locator('#fraud-state', { hasText: 'Rule device: enforce for every client.' }).waitFor();

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

  it('shows the providers with their circuit state and delivery rate, and the audit log', async () => {
    await go(page, 'Providers');
    const log = page.locator('#providers tr[data-provider="log"][data-channel="sms"]');
    await log.waitFor();
    assert.match((await log.textContent()) ?? '', /closed/);
    // Routes: set through the form (a refusal first, in the command's words), listed with a best route's shares, removed.
    await page.getByLabel('Destination', { exact: false }).fill('gh');
    await page.getByLabel('Providers, in failover order', { exact: false }).fill('log,twillio');
    await page.getByRole('button', { name: 'Save route' }).click();
    await page.locator('#routes-problem', { hasText: 'twillio is not configured for sms here' }).waitFor();
    await page.getByLabel('Providers, in failover order', { exact: false }).fill('http, log');
    await page.getByLabel('First provider').selectOption('best');
    await page.getByLabel('Send through the next provider after', { exact: false }).fill('20');
    await page.getByRole('button', { name: 'Save route' }).click();
    await page.locator('#routes-state', { hasText: 'Route saved: sms to GH.' }).waitFor();
    const route = page.locator('#routes tr[data-route="sms GH"]');
    await route.waitFor();
    assert.match((await route.textContent()) ?? '', /http: 95 % \(best\): 0 sent in the last hour.*log: 5 % \(floor\).*20 s without delivery/);
    const listed = await cli({ name: 'routes.list' });
    assert.ok(listed.ok);
    assert.deepEqual(
      (listed.value as { destination: string; providers: string[]; policy: string; failoverAfterSeconds: number | null }[])
        .filter((r) => r.destination === 'GH')
        .map((r) => [r.providers, r.policy, r.failoverAfterSeconds]),
      [[['http', 'log'], 'best', 20]],
    );
    await check(page, 'providers');
    await page.getByRole('button', { name: 'Remove the sms route for GH' }).click();
    await page.locator('#routes-state', { hasText: 'Route removed: sms to GH.' }).waitFor();
    await route.waitFor({ state: 'detached' });
    assert.equal(await route.count(), 0);
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
    // The failures are counted in one-minute windows: the four sign-ins fall in one, however slowly they run.
    await clock.held(async () => {
      for (let i = 0; i < 3; i += 1) {
        await page.getByLabel('Email').fill('ops@example.com');
        await page.getByLabel('Password').fill(`wrong guess ${i}`);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('alert').filter({ hasText: 'wrong' }).waitFor();
      }
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'Too many failed sign-ins' }).waitFor();
    });
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
