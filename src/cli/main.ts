import fs from 'node:fs';
import { runCommandLine } from './command-line.js';

// The `otp-service` command (bin/otp-service.mjs): the command line on this process's streams and signals.
runCommandLine(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  readStdin: () => fs.readFileSync(0, 'utf8'),
  stopRequested: () =>
    new Promise((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    }),
}).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`otp-service: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
