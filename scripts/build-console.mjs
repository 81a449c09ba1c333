// Bundles the operator console's front end (console/: Preact views, uPlot charts) with esbuild into
// dist/console-ui/, which the service serves itself at /console (no CDN: it works offline). Called by
// scripts/build-if-stale.mjs with the server's build; esbuild and the libraries are dependencies, so a
// production install (npm ci --omit=dev) builds it too. Plain JavaScript: it runs before anything is compiled.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The console's sources, relative to root: what a change to makes the build stale. */
export function consoleInputs(root) {
  const files = [];
  const walk = (dir) => {
    if (!fs.existsSync(path.join(root, dir))) return;
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else files.push(rel);
    }
  };
  walk('console');
  return files;
}

/** Synchronous, as the server's build is (`npm start` and the `otp-service` command wait for it). */
export function buildConsole(root) {
  const { buildSync } = createRequire(import.meta.url)('esbuild');
  const out = path.join(root, 'dist', 'console-ui');
  fs.rmSync(out, { recursive: true, force: true });
  buildSync({
    entryPoints: { app: path.join(root, 'console', 'src', 'main.tsx') },
    bundle: true,
    outdir: out,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
    absWorkingDir: root,
  });
  fs.copyFileSync(path.join(root, 'console', 'index.html'), path.join(out, 'index.html'));
}
