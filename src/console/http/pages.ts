import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sendConsoleError } from './console-errors.js';

/**
 * Where the built front end is: `dist/console-ui/` beside this package's `dist/` (scripts/build-if-stale.mjs
 * bundles `console/` there with esbuild). This file sits three folders below the package's root both as
 * src/console/http/pages.ts and as dist/console/http/pages.js.
 */
export const consoleUiDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/console-ui');

/**
 * The console's pages' policy: only its own script and style files, no inline script or style, no frames, and
 * requests only to itself.
 */
export const consolePolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const types: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };

const hidden = { hide: true } as const;

/** GET /console and every page under it (the front end routes itself), and its files under /console/assets/. */
export function pageRoutes(app: FastifyInstance, uiDir: string = consoleUiDir): void {
  const page = (reply: FastifyReply) => {
    const file = path.join(uiDir, 'index.html');
    if (!fs.existsSync(file)) return sendConsoleError(reply, 'NOT_FOUND', 'The console is not built: run npm run build');
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', consolePolicy)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(fs.createReadStream(file));
  };
  app.get('/console', { schema: hidden }, (_r, reply) => page(reply));
  app.get('/console/*', { schema: hidden }, (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    if (rest.startsWith('api/')) return sendConsoleError(reply, 'NOT_FOUND', 'No such route');
    if (!rest.startsWith('assets/')) return page(reply);
    const name = rest.slice('assets/'.length);
    // Only the bundle's own flat file names: no folder, no dot-dot.
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9]+)+$/.test(name)) return sendConsoleError(reply, 'NOT_FOUND', 'No such file');
    const file = path.join(uiDir, name);
    if (!fs.existsSync(file)) return sendConsoleError(reply, 'NOT_FOUND', 'No such file');
    return reply
      .type(types[path.extname(name)] ?? 'application/octet-stream')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(fs.createReadStream(file));
  });
}
