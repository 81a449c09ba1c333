#!/usr/bin/env node
// The `otp-service` command: runs the compiled CLI, compiling it first when a source changed since the last build.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../scripts/build-if-stale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
try {
  buildIfStale(root);
} catch (err) {
  process.stderr.write(`otp-service: could not build: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
await import(join(root, 'dist', 'cli', 'main.js'));
