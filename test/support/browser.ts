import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/**
 * A real browser for the page tests: Debian's chromium (installed by .ci/run), driven by playwright-core, which
 * downloads no browser of its own. Screenshots go to test-output/, kept after the run.
 */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or false when they can. */
export const browserSkip: string | false = fs.existsSync(chromiumPath) ? false : `no browser at ${chromiumPath} (apt-get install chromium)`;

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    // Root in a container has no user namespace for chromium's sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    timeout: 30_000,
  });
}

/** Where a test keeps its screenshots: test-output/<name>.png, relative to the repository. */
export function screenshotPath(name: string): string {
  const dir = path.resolve('test-output');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}
