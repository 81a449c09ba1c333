import fs from 'node:fs';
import type { AdminCommand, AdminResult } from '../admin/commands.js';
import type { Config } from '../config.js';
import { describeDatabaseUrl } from '../store/database-url.js';
import { formatResult, jsonLines } from './format.js';
import { usage } from './help.js';
import type { MessagesOptions } from './messages.js';
import { parseCommand, UsageError, type ParsedCommand } from './parse.js';

/**
 * What a run of the command line reads and writes: the process's own in bin/otp-service (main.ts), buffers when a
 * test runs a command in its own process.
 */
export interface CommandLineIo {
  readonly env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** What a `-` value reads. */
  readStdin(): string;
  /**
   * Resolves, with its name, when the command is asked to stop (SIGINT or SIGTERM): a worker or a follow ends.
   * Asked for only by the commands that run until stopped, so that Ctrl-C ends any other at once, as by default.
   */
  stopRequested(): Promise<string>;
}

/** Runs `otp-service <argv>` to its end and gives its exit code: 0 done, 1 refused or failed, 2 a usage mistake. */
export async function runCommandLine(argv: readonly string[], io: CommandLineIo): Promise<number> {
  let parsed: ParsedCommand;
  try {
    parsed = parseCommand(argv, io.readStdin);
  } catch (err) {
    io.err(err instanceof UsageError ? `${err.message.trimEnd()}\n` : `${(err as Error).message}\n\n${usage()}`);
    return 2;
  }
  if (parsed.kind === 'help') {
    io.out(parsed.text);
    return 0;
  }
  // What a command needs is loaded when it runs, so that help and a mistyped command answer at once.
  const { loadConfig, ConfigError, providerNames } = await import('../config.js');
  let config: Config;
  try {
    config = loadConfig(io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`${err.message}\n`);
    return 2;
  }
  // Asks Meta, not the database.
  if (parsed.kind === 'whatsapp') {
    const { runWhatsApp } = await import('./whatsapp.js');
    return runWhatsApp(parsed.command, io.env, config.OTP_TTL_SECONDS, io.out, io.err);
  }
  // Which database a command works on is never left to guess: it is said on stderr (stdout stays the command's).
  const database = describeDatabase(config);
  // A restore makes its embedded database; a worker waits for the server to.
  const makesItsDatabase = parsed.kind === 'worker' || (parsed.kind === 'data' && parsed.command.kind === 'restore');
  if (database.missing && !makesItsDatabase) {
    io.err(
      `otp-service: no embedded database in ${config.DATA_DIR}: start the server once (npm start) to make it, or set DATA_DIR (or DATABASE_URL) to the server's\n`,
    );
    return 1;
  }
  // --json answers are for programs, which read one JSON document on each stream; the line is for people.
  const json =
    parsed.kind === 'admin' ? parsed.json : parsed.kind === 'messages' ? parsed.options.json : parsed.kind === 'data' ? parsed.command.json : false;
  if (!json) io.err(`otp-service: ${database.text}\n`);
  if (parsed.kind === 'worker') return runWorker(config, io);
  if (parsed.kind === 'messages') return followMessages(config, parsed.options, io);
  if (parsed.kind === 'data') {
    const { runDataCommand } = await import('./backup.js');
    return runDataCommand(config, parsed.command, { out: io.out, err: io.err });
  }
  // A route's providers must be configured here, as the process that runs the command reads its settings.
  if (parsed.command.name === 'routes.set' || parsed.command.name === 'routes.remove') {
    const { checkRoute } = await import('../admin/route-commands.js');
    const checked = checkRoute(parsed.command, (channel) => providerNames(config.providers, channel));
    if ('problem' in checked) {
      io.err(errorLine(parsed.json, checked.problem));
      return 2;
    }
  }
  // So is a price sheet's currency, COST_CURRENCY, and its provider names.
  if (parsed.command.name === 'prices.import') {
    const { checkPriceImport } = await import('../admin/price-commands.js');
    const { providerModule } = await import('../providers/registry.js');
    const checked = checkPriceImport(parsed.command, { currency: config.COST_CURRENCY, knownProvider: (name) => providerModule(name) !== undefined });
    if ('problem' in checked) {
      io.err(errorLine(parsed.json, checked.problem));
      return 2;
    }
  }
  const result = await execute(config, parsed.command, io);
  if (!result.ok) {
    io.err(errorLine(parsed.json, result.error));
    return 1;
  }
  io.out(parsed.json ? jsonLines(parsed.command, result.value) : formatResult(parsed.command, result.value));
  return 0;
}

/** A refusal on stderr: one JSON object for programs (--json), a line for people. */
function errorLine(json: boolean, error: string): string {
  return json ? `${JSON.stringify({ error })}\n` : `error: ${error}\n`;
}

/** What the command's database is, as an operator would name it (never the password); `missing`: no such folder. */
export function describeDatabase(config: Config): { readonly text: string; readonly missing: boolean } {
  if (config.DATABASE_URL) {
    return { text: `database: PostgreSQL ${describeDatabaseUrl(config.DATABASE_URL)}`, missing: false };
  }
  if (config.DATA_DIR === 'memory://') return { text: 'database: embedded, in memory', missing: false };
  return { text: `database: embedded, in ${config.DATA_DIR}`, missing: !fs.existsSync(config.DATA_DIR) };
}

/** Runs a command through the running server (embedded database) or straight on the database. */
async function execute(config: Config, command: AdminCommand, io: CommandLineIo): Promise<AdminResult> {
  if (!config.DATABASE_URL) {
    const { sendAdminCommand } = await import('../admin/socket.js');
    const viaServer = await sendAdminCommand(config.adminSocketPath, command);
    if (viaServer !== null) return viaServer as AdminResult;
  }
  const [{ commandLogger }, { adminDeps }, { createServices }, { runAudited }, { systemClock }, { cryptoRandom }] = await Promise.all([
    import('../logger.js'),
    import('../admin/deps.js'),
    import('../services.js'),
    import('../admin/audited.js'),
    import('../domain/ports.js'),
    import('../domain/random.js'),
  ]);
  const logger = commandLogger('warn', io.err);
  const services = await createServices(config, logger, systemClock, cryptoRandom);
  try {
    return await runAudited(adminDeps(services), 'cli', command);
  } finally {
    await services.db.close();
  }
}

/** `otp-service worker`: the workers until asked to stop. */
async function runWorker(config: Config, io: CommandLineIo): Promise<number> {
  const [{ processLogger }, { startWorkers }, { stopWithin }] = await Promise.all([
    import('../logger.js'),
    import('../server.js'),
    import('../shutdown-deadline.js'),
  ]);
  const logger = processLogger(config.LOG_LEVEL, config.NODE_ENV);
  const running = await startWorkers(config, { logger });
  logger.info({ database: running.services.db.kind }, 'otp-service worker running');
  const signal = await Promise.race([
    io.stopRequested(),
    // As the server does (main.ts): the embedded database's thread died, so stop and let the supervisor start again.
    running.services.db.lost.then((err) => {
      logger.fatal({ err }, 'the embedded database stopped: exiting so that the supervisor starts the worker again');
      return 'database lost';
    }),
  ]);
  const exitCode = signal === 'database lost' ? 1 : 0;
  logger.info({ signal }, 'worker shutting down: finishing deliveries in flight');
  // The same one deadline as the server's: exits by SHUTDOWN_GRACE_MS whatever still waits (its claims hold it).
  return new Promise<number>((resolve) =>
    stopWithin(config.SHUTDOWN_GRACE_MS, logger, () => running.close(), (code) => resolve(Math.max(code, exitCode))),
  );
}

/** `otp-service messages`, until done or, following, until asked to stop. */
async function followMessages(config: Config, options: MessagesOptions, io: CommandLineIo): Promise<number> {
  const stop = new AbortController();
  void io.stopRequested().then(() => stop.abort());
  const { runMessages } = await import('./messages.js');
  return runMessages(config, options, io.out, io.err, stop.signal);
}
