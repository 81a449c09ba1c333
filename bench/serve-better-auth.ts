/**
 * The OTP peer: better-auth with its phone-number plugin on PostgreSQL (BETTER_AUTH_DATABASE_URL), behind a
 * plain node http server. Its own migrations create its tables. sendOTP does nothing: a fair reading of "a
 * provider that only logs", although our log provider also stores each message in the database (more work
 * on our side). Prints one JSON line {url, version}.
 */
import http from 'node:http';
import pg from 'pg';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import { phoneNumber } from 'better-auth/plugins';
import { packageVersion } from './lib/package-version.js';

async function main(): Promise<void> {
  const databaseUrl = process.env.BETTER_AUTH_DATABASE_URL;
  if (!databaseUrl) throw new Error('BETTER_AUTH_DATABASE_URL is required');
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  // The same pool size as our service in the bench (one connection per load connection).
  const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.POOL_SIZE ?? 20) });
  const options = {
    database: pool,
    baseURL: url,
    secret: 'bench-secret-bench-secret-bench-secret-0123456789',
    telemetry: { enabled: false },
    logger: { disabled: true },
    // The limiter is off in our service for the bench too (CLIENT_RATE_LIMIT_PER_SECOND=0, huge phone limits).
    rateLimit: { enabled: false },
    // BETTER_AUTH_DISABLE_CLEANUP=true: code lookups stop deleting expired codes on the way (default: they do).
    verification: { disableCleanup: process.env.BETTER_AUTH_DISABLE_CLEANUP === 'true' },
    plugins: [
      phoneNumber({
        sendOTP: () => undefined,
        // Like OTP_MAX_ATTEMPTS on our side; attempts never run out in the bench.
        allowedAttempts: 5,
        expiresIn: 3600,
      }),
    ],
  };
  const { runMigrations } = await getMigrations(options);
  await runMigrations();
  const auth = betterAuth(options);
  server.on('request', toNodeHandler(auth));
  const version = packageVersion('better-auth');
  process.stdout.write(`${JSON.stringify({ url, version })}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => {
      pool.end().then(
        () => process.exit(0),
        () => process.exit(0),
      );
    });
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`serve-better-auth failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
