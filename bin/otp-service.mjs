#!/usr/bin/env node
// The `otp-service` command: runs the compiled CLI. It never compiles: a server may be running from dist/, and a
// rebuild under it would swap its files. `npm start` and `npm run build` build; a stale build is run as it is,
// with a warning that says how to rebuild.
import fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleness } from '../scripts/build-if-stale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write(`otp-service: not built yet (${entry} is missing): run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
const stale = staleness(root);
if (stale !== null) {
  process.stderr.write(`otp-service: warning: running the last build, which is out of date (${stale}); \`npm run build\` rebuilds it\n`);
}
await import(entry);
