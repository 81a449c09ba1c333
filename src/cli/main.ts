import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { systemClock } from '../domain/ports.js';
import { cryptoRandom } from '../domain/random.js';
import { createLogger } from '../logger.js';
import { createServices } from '../services.js';
import { runAdminCommand, type AdminCommand, type AdminResult } from './admin-commands.js';
import { sendAdminCommand } from './admin-socket.js';
import { formatResult } from './format.js';

const usage = `usage: otp-service <command> [options]

  clients create --name NAME --scopes "otp:send otp:verify" [--json]
  clients list [--json]
  clients disable CLIENT_ID [--json]
  clients rotate-secret CLIENT_ID [--json]
  clients rotate-webhook-secret CLIENT_ID [--json]

Uses the same database settings as the server (DATABASE_URL, or the embedded database in DATA_DIR).
`;

export class UsageError extends Error {}

export function parseCommand(argv: readonly string[]): { command: AdminCommand; json: boolean } {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { name: { type: 'string' }, scopes: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [group, action, id] = positionals;
  const json = values.json ?? false;
  const needId = (): string => {
    if (!id) throw new UsageError(`${group} ${action} needs a CLIENT_ID`);
    return id;
  };
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
    return await runAdminCommand(services, command);
  } finally {
    await services.db.close();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommand(argv);
  } catch (err) {
    process.stderr.write(err instanceof UsageError ? `${err.message}\n` : `${(err as Error).message}\n\n${usage}`);
    return 2;
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
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
