import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchBrowser, screenshotPath } from '../support/browser.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * Contract 12: GET /docs renders the API reference in a real browser (Debian's chromium), from this server
 * alone (nothing fetched elsewhere: it works offline) and within its Content-Security-Policy.
 * The page reads no storage, so it runs on the embedded database only.
 */
describe('the /docs page in a browser', { skip: browserSkip }, () => {
  let h: Harness;
  let browser: Browser;
  let base: string;
  before(async () => {
    h = await createHarness('pglite');
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const address = h.app.server.address();
    assert.ok(address && typeof address === 'object');
    base = `http://127.0.0.1:${address.port}`;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /** A page on /docs that notes whatever breaks the policy or comes from elsewhere. */
  async function openDocs() {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const elsewhere: string[] = [];
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    // Anything not from this server is refused and noted: the page must not need it.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`) || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    await page.addInitScript(() => {
      const seen: string[] = [];
      Reflect.set(window, 'cspViolations', seen);
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    // Swagger UI lays out the whole API description in the browser: seconds of processor, many more when the
    // machine's cores are shared with other test files. The waits are bounds, not sleeps.
    const response = await page.goto(`${base}/docs`, { waitUntil: 'load', timeout: 60_000 });
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
    const operation = (method: string, path: string) =>
      page.locator(`.opblock-${method.toLowerCase()} .opblock-summary`).filter({
        has: page.locator('.opblock-summary-path', { hasText: new RegExp(`^${path.replace(/[{}]/g, '\\$&')}$`) }),
      });
    await operation('POST', '/v1/otp/request').waitFor({ timeout: 60_000 });
    const clean = async () => {
      const violations: unknown = await page.evaluate(() => Reflect.get(window, 'cspViolations'));
      assert.deepEqual(violations, [], 'the page broke its own Content-Security-Policy');
      assert.deepEqual(elsewhere, [], 'the page asked for something from elsewhere');
      assert.deepEqual(pageErrors, []);
    };
    return { page, operation, clean };
  }

  it('renders every operation group and an operation\'s responses, offline and without a CSP violation', async () => {
    const { page, operation, clean } = await openDocs();
    for (const [method, path] of [
      ['POST', '/v1/otp/request'],
      ['GET', '/v1/otp/{id}'],
      ['POST', '/v1/otp/verify'],
      ['GET', '/v1/otp/{id}/webhooks'],
      ['POST', '/oauth/token'],
      ['GET', '/healthz'],
    ] as const) {
      assert.equal(await operation(method, path).count(), 1, `${method} ${path} is not on the page`);
    }
    // By the tag's name, not its text: a description may name another tag ("verifications").
    for (const tag of ['Verifications', 'Number lookup', 'Stats', 'Authentication', 'Webhooks', 'Health']) {
      assert.equal(await page.locator(`.opblock-tag[data-tag="${tag}"]`).count(), 1, `tag ${tag} is not on the page`);
    }
    await page.screenshot({ path: screenshotPath('docs') });

    // Opening an operation shows its description, its scope and its documented answers with their codes.
    await operation('POST', '/v1/otp/verify').click();
    const verify = page.locator('.opblock.is-open');
    await verify.locator('.responses-table').first().waitFor({ timeout: 10_000 });
    const text = await verify.innerText();
    for (const expected of ['Scope: otp:verify', '422', 'OTP_MISMATCH', '409', 'VERIFICATION_NOT_PENDING', 'Verification successful']) {
      assert.ok(text.includes(expected), `the open operation does not show ${expected}`);
    }
    await clean();
    await page.close();
  });

  it('gets a token through Authorize (client credentials) and calls an operation with Try it out', async () => {
    const client = await h.client(['otp:send', 'otp:verify']);
    const { page, operation, clean } = await openDocs();

    await page.locator('.auth-wrapper .authorize').click();
    const modal = page.locator('.modal-ux');
    await modal.getByLabel('client_id:').fill(client.clientId);
    await modal.getByLabel('client_secret:').fill(client.clientSecret);
    await modal.locator('label[for^="otp:send-"]').click();
    // The modal holds each scheme (OAuth2, and /v2's HTTP Basic): this one is OAuth2's.
    await modal.getByRole('button', { name: 'Apply given OAuth2 credentials' }).click();
    // Swagger UI shows Logout once the token endpoint answered with a token.
    await modal.locator('.auth-btn-wrapper button', { hasText: 'Logout' }).waitFor({ timeout: 10_000 });
    await modal.locator('.auth-btn-wrapper button', { hasText: 'Close' }).first().click();

    await operation('GET', '/v1/otp/{id}').click();
    const open = page.locator('.opblock.is-open');
    await open.locator('button.try-out__btn').click();
    await open.locator('input[placeholder="id"]').fill('3f1c2b7e-8a4d-4e0f-9b6a-2d5c7e9f1a3b');
    await open.locator('button.execute').click();
    const live = open.locator('.live-responses-table tr.response .response-col_status').first();
    await live.waitFor({ timeout: 10_000 });
    // 404, not 401: the call carried the token the page obtained; the id is nobody's.
    assert.equal((await live.innerText()).trim(), '404');
    assert.match(await open.locator('.live-responses-table').innerText(), /NOT_FOUND/);
    await open.locator('.live-responses-table').scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath('docs-try-it-out') });
    await clean();
    await page.close();
  });
});
