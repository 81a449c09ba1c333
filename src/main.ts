import { loadConfigOrReport, onlyLogProviders } from './config.js';
import { processLogger } from './logger.js';
import { startServer } from './server.js';
import { stopWithin } from './shutdown-deadline.js';

/** Composition root: config -> server (db, migrations, providers, services, app, workers) -> signals. */
async function main(): Promise<void> {
  const config = loadConfigOrReport();
  if (!config) process.exit(2);
  const logger = processLogger(config.LOG_LEVEL, config.NODE_ENV);
  const server = await startServer(config, { logger });
  logger.info({ url: server.url, database: server.services.db.kind }, 'otp-service listening');
  if (config.devInbox) {
    const where = { url: `${server.url}/dev/inbox` };
    if (onlyLogProviders(config.providers)) logger.info(where, 'development inbox: every code the log provider "sent", live');
    else logger.warn(where, 'DEV_INBOX=true beside a real provider: the development inbox shows codes to anyone who reaches this server');
  }
  let stopping = false;
  const stop = (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    stopWithin(config.SHUTDOWN_GRACE_MS, logger, () => server.close(), (code) => process.exit(Math.max(code, exitCode)));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The embedded database's thread died: what waited for it was answered 503, and nothing more can be served
  // until it is opened again, which is a start of the process (PGlite replays its log then), by its supervisor.
  void server.services.db.lost.then((err) => {
    logger.fatal({ err }, 'the embedded database stopped: exiting so that the supervisor starts the service again');
    stop('database lost', 1);
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`otp-service failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
