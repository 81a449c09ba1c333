#!/usr/bin/env node
// Compiles src/ to dist/ only when a source changed since the last build (`npm start`, the `otp-service`
// command); `--force` always compiles (`npm run build`). Plain JavaScript: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole, consoleInputs } from './build-console.mjs';

/** Written into dist/ after each build: the sources it was built from; its mtime is when that build began. */
const stampName = '.build-stamp';

/** The files a build reads, relative to root, sorted: everything under src/ and console/, and the two tsconfig files. */
export function buildInputs(root) {
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else files.push(rel);
    }
  };
  if (fs.existsSync(path.join(root, 'src'))) walk('src');
  for (const config of ['tsconfig.json', 'tsconfig.build.json']) if (fs.existsSync(path.join(root, config))) files.push(config);
  files.push(...consoleInputs(root));
  return files.sort();
}

/** Why dist/ must be built again, or null when it is up to date with every input. */
export function staleness(root) {
  const stamp = path.join(root, 'dist', stampName);
  if (!fs.existsSync(stamp)) return 'not built yet';
  let built;
  try {
    built = JSON.parse(fs.readFileSync(stamp, 'utf8')).files;
  } catch {
    return 'the last build record is unreadable';
  }
  const inputs = buildInputs(root);
  if (!Array.isArray(built) || built.join('\n') !== inputs.join('\n')) return 'a source was added or removed';
  const builtAt = fs.statSync(stamp).mtimeMs;
  const changed = inputs.find((f) => fs.statSync(path.join(root, f)).mtimeMs > builtAt);
  return changed ? `${changed} changed` : null;
}

/** Runs the TypeScript compiler on root's tsconfig.build.json and records what it was built from. */
export function build(root) {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    throw new Error('cannot build: the typescript package is not installed (npm install)');
  }
  const inputs = buildInputs(root);
  // A source saved while the compiler runs must make the next start build again: the stamp is written before the
  // compiler starts, so that its time is the build's start on the clock sources are stamped by (the file system's;
  // a Date, to the millisecond, could fall before a source written in the same millisecond just before the build),
  // and moved into place only once the build succeeded.
  const dist = path.join(root, 'dist');
  fs.mkdirSync(dist, { recursive: true });
  const pending = path.join(dist, `${stampName}.pending`);
  fs.writeFileSync(pending, `${JSON.stringify({ files: inputs })}\n`);
  // Compiler output goes to stderr: a command's stdout (--json) stays its own.
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: ['ignore', 2, 2] });
  if (fs.existsSync(path.join(root, 'console'))) buildConsole(root);
  fs.renameSync(pending, path.join(dist, stampName));
}

/**
 * Builds when needed: 'built' or 'fresh'. Without the compiler (a production install without dev
 * dependencies) an existing dist/ is used as it is, with a warning.
 */
export function buildIfStale(root, { force = false, log = (text) => process.stderr.write(text) } = {}) {
  const reason = force ? 'asked to' : staleness(root);
  if (reason === null) return 'fresh';
  try {
    build(root);
  } catch (err) {
    const usable = fs.existsSync(path.join(root, 'dist', 'main.js')) && !force;
    if (!usable || !String(err.message).startsWith('cannot build')) throw err;
    log(`warning: dist/ may be out of date (${reason}), and ${err.message}\n`);
    return 'fresh';
  }
  return 'built';
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  try {
    buildIfStale(root, { force: process.argv.includes('--force') });
  } catch (err) {
    process.stderr.write(`build failed: ${err.message}\n`);
    process.exit(1);
  }
}
