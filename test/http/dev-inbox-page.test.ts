import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { nextLocalNumber } from '../support/api.js';
import { browserSkip, launchBrowser, screenshotPath } from '../support/browser.js';

interface Created {
  id: string;
  otp: string;
  phoneNumber: string;
}

/**
 * The development inbox in a real browser (Debian's chromium): the service listens on 127.0.0.1, the page is
 * opened once, and what the API does afterwards shows up on it without a reload.
 */
describe('the development inbox page in chromium', { skip: browserSkip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let token: string;
  const pageErrors: string[] = [];

  const api = async (path: string, body: unknown): Promise<Response> =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });

  const create = async (body: Record<string, unknown>): Promise<Created> => {
    const res = await api('/v1/otp/request', { countryCode: '+234', phoneNumber: nextLocalNumber(), ...body });
    assert.equal(res.status, 200);
    return ((await res.json()) as { data: Created }).data;
  };

  before(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
    server = await startServer(config, { logger: pino({ level: 'silent' }), print: () => undefined });
    const client = await server.services.clients.create('inbox test', ['otp:send', 'otp:verify']);
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }),
    });
    token = ((await res.json()) as { accessToken: string }).accessToken;
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    // A script or style refused by the page's Content-Security-Policy shows up here.
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows an SMS, a dropped call and a WhatsApp message as they are sent, and a verify turning SUCCESS, without a reload', async () => {
    await page.goto(`${server.url}/dev/inbox`);
    await page.locator('#connection.live').waitFor({ timeout: 10_000 });
    // Anything the page did from here on happened without navigating.
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));

    const sms = await create({ type: 'SEND_SMS' });
    const smsItem = page.locator(`section.phone[data-phone="${sms.phoneNumber}"] li[data-verification-id="${sms.id}"]`);
    await smsItem.waitFor({ timeout: 10_000 });
    assert.equal(await smsItem.locator('mark').textContent(), sms.otp, 'the code is marked in the text');
    assert.match((await smsItem.locator('.text').textContent()) ?? '', new RegExp(`^${sms.otp} is your verification code`));

    const call = await create({ type: 'DROPPED_CALL' });
    const callItem = page.locator(`section.phone[data-phone="${call.phoneNumber}"] li[data-verification-id="${call.id}"]`);
    await callItem.waitFor({ timeout: 10_000 });
    assert.equal(await callItem.locator('mark').textContent(), call.otp, "the caller id's last digits are marked");
    assert.ok(((await callItem.locator('.caller').textContent()) ?? '').endsWith(call.otp));
    assert.equal(await callItem.locator('.badge').getAttribute('data-status'), 'PENDING');

    // A WhatsApp message: the business number, Meta's authentication text with the code marked, a copy-code button.
    const whatsapp = await create({ type: 'WHATSAPP' });
    const waItem = page.locator(`section.phone[data-phone="${whatsapp.phoneNumber}"] li[data-verification-id="${whatsapp.id}"]`);
    await waItem.waitFor({ timeout: 10_000 });
    assert.equal(await waItem.getAttribute('data-channel'), 'whatsapp');
    assert.equal(await waItem.locator('.whatsapp mark').textContent(), whatsapp.otp);
    assert.match((await waItem.locator('.whatsapp .from').textContent()) ?? '', /^WhatsApp · \+\d+$/);
    assert.equal(await waItem.locator('.whatsapp .copy').textContent(), 'Copy code');

    const verified = await api('/v1/otp/verify', { id: sms.id, otp: sms.otp });
    assert.equal(verified.status, 200);
    await page.locator(`li[data-verification-id="${sms.id}"] .badge[data-status="SUCCESS"]`).waitFor({ timeout: 10_000 });
    assert.equal(await callItem.locator('.badge').getAttribute('data-status'), 'PENDING', 'the other stays PENDING');

    // Newest first across the page: the call's phone comes before the SMS's.
    const phones = await page.locator('section.phone').evaluateAll((els) => els.map((e) => e.getAttribute('data-phone')));
    assert.deepEqual(phones.slice(0, 3), [whatsapp.phoneNumber, call.phoneNumber, sms.phoneNumber]);

    await page.screenshot({ path: screenshotPath('dev-inbox'), fullPage: true });
    assert.deepEqual(navigations, [], 'no reload');
    assert.deepEqual(pageErrors, [], 'no script error and nothing refused by the Content-Security-Policy');
  });
});
