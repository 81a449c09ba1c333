import type { AuditLog } from '../console/audit-log.js';
import { reducedNumber } from '../domain/personal-data.js';
import type { Clock } from '../domain/ports.js';
import { runAdminCommand, type AdminCommand, type AdminDeps, type AdminResult } from './commands.js';

/** The commands that read only: everything else changes something and is written to the audit log. */
const readOnly = new Set<AdminCommand['name']>([
  'clients.list',
  'clients.show',
  'clients.templates.list',
  'clients.templates.preview',
  'verifications.find',
  'providers.status',
  'clients.test-numbers.list',
  'lists.show',
  'rules.list',
  'routes.list',
  'prices.list',
  'costs',
  'verdicts',
  'webhooks.list',
  'webhooks.show',
  'blocks.list',
  'stats',
  'messages.latest',
  'messages.recent',
  'operators.list',
  'audit.list',
]);

/** Whether a command changes anything (and so is audited). */
export function isChange(command: AdminCommand): boolean {
  return !readOnly.has(command.name);
}

/** What a command is about, as the audit log names it: an id, a prefix, a number, an email; never a secret. */
export function auditTarget(command: AdminCommand, result: AdminResult): string | null {
  if (command.name === 'clients.create') {
    const made = result.ok ? (result.value as { clientId?: unknown }) : null;
    return typeof made?.clientId === 'string' ? made.clientId : command.clientName;
  }
  // The log keeps no number an erase took away: its prefix only.
  if (command.name === 'erase') return command.clientId === null ? reducedNumber(command.phoneNumber) : `${reducedNumber(command.phoneNumber)} (client ${command.clientId})`;
  if ('id' in command) return command.id;
  if ('prefix' in command) return command.prefix;
  if ('email' in command) return command.email;
  if (command.name === 'lists.add' || command.name === 'lists.remove') return command.clientId === null ? command.value : `${command.value} (client ${command.clientId})`;
  if (command.name === 'routes.set') {
    const weights = command.weights ? ` weights ${command.weights.join(',')}` : '';
    const failover = command.failoverAfterSeconds ? ` failover after ${command.failoverAfterSeconds} s` : '';
    const policy = command.policy === 'best' ? ' policy best' : '';
    return `${command.channel} ${command.destination}: ${command.providers.join(',')}${weights}${policy}${failover}`;
  }
  if (command.name === 'rules.set') return `${command.rule} ${command.mode}${command.clientId === null ? '' : ` (client ${command.clientId})`}`;
  if (command.name === 'routes.remove') return `${command.channel} ${command.destination}`;
  if (command.name === 'prices.import') return command.file;
  if (command.name === 'prices.remove') return `${command.provider} ${command.channel} ${command.destination}`;
  return null;
}

/**
 * Runs an operator command and, when it changes something, writes who did it and how it ended to the audit
 * log: the console and the CLI both come here, so neither can change a thing unrecorded.
 */
export async function runAudited(deps: AdminDeps & { readonly audit: AuditLog; readonly clock: Clock }, actor: string, command: AdminCommand): Promise<AdminResult> {
  const result = await runAdminCommand(deps, command);
  if (isChange(command)) {
    await deps.audit.record({
      at: deps.clock.now().toISOString(),
      actor,
      action: command.name,
      target: auditTarget(command, result),
      outcome: result.ok ? `ok${changedFields(command)}` : `refused: ${result.error}`,
    });
  }
  return result;
}

/**
 * The fields a settings change named (`clients.update`), or what a `clients hooks` did, never their values: a
 * CAPTCHA secret, a webhook address or ZITADEL's key is the client's, and the log says only that it changed.
 */
function changedFields(command: AdminCommand): string {
  const fields =
    command.name === 'clients.update'
      ? Object.keys(command.change).sort()
      : command.name === 'clients.hooks'
        ? [
            ...(command.enable ? ['enable'] : []),
            ...(command.disable ? ['disable'] : []),
            ...(command.zitadelSigningKey !== undefined ? [command.zitadelSigningKey === null ? 'zitadelSigningKey cleared' : 'zitadelSigningKey'] : []),
          ]
        : [];
  return fields.length > 0 ? `: ${fields.join(', ')}` : '';
}
