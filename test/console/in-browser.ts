import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { after, before } from 'node:test';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { runAudited } from '../../src/admin/audited.js';
import { runAdminCommand } from '../../src/admin/commands.js';
import { loadConfig } from '../../src/config.js';
import { adminDeps } from '../../src/admin/deps.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { launchBrowser } from '../support/browser.js';
import { RealClock } from '../support/clock.js';
import { freshDatabase, type TestDatabase } from '../support/databases.js';
import { waitFor } from '../webhooks/helpers.js';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Every operator's password in the browser tests. */
export const password = 'console test password';

/** test-output/console/<name>.png */
export function shot(name: string): string {
  const dir = path.resolve('test-output', 'console');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}

/** axe-core's serious and critical violations on the page as it is now (injected by CDP, which the page's CSP does not govern). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(`(() => { ${axeSource}\n; return true })()`);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

type Answer = { status: number; body: { data: Record<string, unknown>; error?: { code: string } } };

export interface ConsoleInBrowserOptions {
  /** More settings for the server. */
  readonly env?: Record<string, string>;
  /** Made and signed in on `page` before the first test (default ops@example.com); null: nobody is. */
  readonly signedIn?: string | null;
}

/**
 * The console in chromium on a fresh database, served by a real server (PREFIX_LIMIT_COUNT=3, so that throttles
 * show at once), with an operator signed in on `page` unless `signedIn` is null; helpers for the tests of a suite.
 */
export function consoleInBrowser(kind: 'pglite' | 'postgres', options: ConsoleInBrowserOptions = {}) {
  let db: TestDatabase;
  let server: RunningServer;
  /** The server's origin as the browser reaches it (localhost: passkeys need a host name). */
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** What pages logged as errors, and axe's serious violations, for the suite's last test. */
  const pageErrors: string[] = [];
  /** The server's clock: real time, which a test may hold still (RealClock). */
  const clock = new RealClock();
  const violations: string[] = [];
  let seq = 0;
  const t = {
    get server() {
      return server;
    },
    get base() {
      return base;
    },
    get browser() {
      return browser;
    },
    get context() {
      return context;
    },
    get page() {
      return page;
    },
    pageErrors,
    violations,
  };

  const cli = (command: Parameters<typeof runAdminCommand>[1]) => runAudited(adminDeps(server.services), 'cli', command);
  /** A local Nigerian number not used before in this suite, under a prefix of its own. */
  const number = () => {
    seq += 1;
    return `0807${String(1000 + (seq % 9000)).padStart(4, '0')}${String(seq % 1000).padStart(3, '0')}`;
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
  /** An operator made by the CLI whose one-time link set `password`. */
  const operator = async (email: string) => {
    const made = await cli({ name: 'operators.create', email });
    assert.ok(made.ok);
    const res = await fetch(`${base}/console/api/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ token: (made.value as { link: string }).link.split('#')[1], password }),
    });
    assert.equal(res.status, 200);
  };
  /** A client of its own (its settings change nobody else's traffic), and creates with its token. */
  const ownClient = async (name: string) => {
    const made = await server.services.clients.create(name, ['otp:send', 'otp:verify']);
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: made.clientId, client_secret: made.clientSecret }),
    });
    const token = ((await res.json()) as { accessToken: string }).accessToken;
    const create = async (phoneNumber: string, extra: Record<string, unknown> = {}): Promise<Answer> => {
      const r = await fetch(`${base}/v1/otp/request`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ countryCode: '+234', phoneNumber, ...extra }),
      });
      return { status: r.status, body: (await r.json()) as Answer['body'] };
    };
    return { clientId: made.clientId, create };
  };
  const settingsOf = async (clientId: string) => {
    const shown = await cli({ name: 'clients.show', id: clientId });
    assert.ok(shown.ok);
    return (shown.value as { settings: Record<string, unknown> }).settings;
  };
  /** The newest message sent to a number (SMS or call, through the log provider). */
  const lastMessageTo = (e164: string) =>
    waitFor(`a message to ${e164}`, async () => {
      const latest = await runAdminCommand(adminDeps(server.services), { name: 'messages.latest', to: e164, limit: 5 });
      return latest.ok ? (latest.value as { text?: string; channel?: string }[])[0] : undefined;
    });

  before(async () => {
    db = await freshDatabase(kind);
    const config = loadConfig({
      ...db.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      CONSOLE: 'true',
      PHONE_COOLDOWN_SECONDS: '0',
      PREFIX_LIMIT_COUNT: '3',
      ...options.env,
    });
    server = await startServer(config, { logger: pino({ level: 'silent' }), clock, print: () => undefined });
    // localhost, not 127.0.0.1: a passkey's relying party is a host name, never an address.
    base = server.url.replace('127.0.0.1', 'localhost');
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await newPage(context);
    const email = options.signedIn === undefined ? 'ops@example.com' : options.signedIn;
    if (email === null) return;
    await operator(email);
    await signIn(page, email);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await db?.drop();
  });

  return { t, cli, number, newPage, check, go, signIn, operator, ownClient, settingsOf, lastMessageTo, clock };
}
