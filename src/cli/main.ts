import { parseArgs } from 'node:util';
import { loadConfigOrReport, type Config } from '../config.js';
import { systemClock } from '../domain/ports.js';
import { cryptoRandom } from '../domain/random.js';
import { createLogger } from '../logger.js';
import { adminDeps, startWorkers } from '../server.js';
import { createServices } from '../services.js';
import { deliveryStatuses } from '../domain/webhook-delivery.js';
import {
  defaultListLimit,
  parseDeliveryStatus,
  runAdminCommand,
  type AdminCommand,
  type AdminResult,
} from '../admin/commands.js';
import { sendAdminCommand } from '../admin/socket.js';
import { formatResult } from './format.js';

const usage = `usage: otp-service <command> [options]

  clients create --name NAME --scopes "otp:send otp:verify" [--json]
  clients list [--json]
  clients disable CLIENT_ID [--json]
  clients rotate-secret CLIENT_ID [--json]
  clients rotate-webhook-secret CLIENT_ID [--json]
  webhooks list [--status pending|delivered|failed|none] [--verification VERIFICATION_ID] [--limit N] [--json]
  webhooks show EVENT_ID [--json]          one event (the webhook-id) with every delivery attempt
  webhooks replay EVENT_ID [--json]        send it again now, with a fresh retry schedule
  worker                                   run the background workers (webhook delivery included), no HTTP

Uses the same database settings as the server (DATABASE_URL, or the embedded database in DATA_DIR).
`;

export class UsageError extends Error {}

export type ParsedCommand =
  | { readonly kind: 'admin'; readonly command: AdminCommand; readonly json: boolean }
  | { readonly kind: 'worker' };

export function parseCommand(argv: readonly string[]): ParsedCommand {
  const parsed = parseAdmin(argv);
  return 'worker' in parsed ? { kind: 'worker' } : { kind: 'admin', ...parsed };
}

function parseAdmin(argv: readonly string[]): { command: AdminCommand; json: boolean } | { worker: true } {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      status: { type: 'string' },
      verification: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [group, action, id] = positionals;
  const json = values.json ?? false;
  if (group === 'worker' && positionals.length === 1) return { worker: true };
  const needId = (): string => {
    if (!id) throw new UsageError(`${group} ${action} needs ${group === 'webhooks' ? 'an EVENT_ID' : 'a CLIENT_ID'}`);
    return id;
  };
  if (group === 'webhooks') {
    switch (action) {
      case 'list': {
        const status = values.status === undefined ? null : parseDeliveryStatus(values.status);
        if (status === undefined) throw new UsageError(`--status must be one of: ${deliveryStatuses.join(', ')}`);
        const limit = values.limit === undefined ? defaultListLimit : Number(values.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
        return {
          command: { name: 'webhooks.list', status, verificationId: values.verification ?? null, limit },
          json,
        };
      }
      case 'show':
      case 'replay':
        return { command: { name: `webhooks.${action}`, id: needId() }, json };
    }
  }
  if (group === 'clients') {
    switch (action) {
      case 'create':
        if (!values.name || !values.scopes) throw new UsageError('clients create needs --name and --scopes');
        return {
          command: { name: 'clients.create', clientName: values.name, scopes: values.scopes.split(/\s+/).filter(Boolean) },
          json,
        };
      case 'list':
        return { command: { name: 'clients.list' }, json };
      case 'disable':
      case 'rotate-secret':
      case 'rotate-webhook-secret':
        return { command: { name: `clients.${action}`, id: needId() }, json };
    }
  }
  throw new UsageError(usage);
}

/** Runs a command through the running server (embedded database) or straight on the database. */
async function execute(config: Config, command: AdminCommand): Promise<AdminResult> {
  if (!config.DATABASE_URL) {
    const viaServer = await sendAdminCommand(config.adminSocketPath, command);
    if (viaServer !== null) return viaServer as AdminResult;
  }
  const logger = createLogger('warn');
  const services = await createServices(config, logger, systemClock, cryptoRandom);
  try {
    return await runAdminCommand(adminDeps(services), command);
  } finally {
    await services.db.close();
  }
}

/** `otp-service worker`: the workers until SIGTERM or SIGINT. */
async function runWorker(config: Config): Promise<number> {
  const logger = createLogger(config.LOG_LEVEL);
  const running = await startWorkers(config, { logger });
  logger.info({ database: running.services.db.kind }, 'otp-service worker running');
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ signal }, 'worker shutting down: finishing deliveries in flight');
  await running.close();
  return 0;
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed: ParsedCommand;
  try {
    parsed = parseCommand(argv);
  } catch (err) {
    process.stderr.write(err instanceof UsageError ? `${err.message}\n` : `${(err as Error).message}\n\n${usage}`);
    return 2;
  }
  const config = loadConfigOrReport();
  if (!config) return 2;
  if (parsed.kind === 'worker') return runWorker(config);
  const result = await execute(config, parsed.command);
  if (!result.ok) {
    process.stderr.write(parsed.json ? `${JSON.stringify({ error: result.error })}\n` : `error: ${result.error}\n`);
    return 1;
  }
  process.stdout.write(parsed.json ? `${JSON.stringify(result.value)}\n` : formatResult(parsed.command, result.value));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`otp-service: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
