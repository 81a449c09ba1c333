import type { AdminCommand } from './admin-commands.js';

/** Human-readable output of a command's result (the --json output is the value itself). */
export function formatResult(command: AdminCommand, value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return 'no clients\n';
    return `${value.map((v) => line(v as Record<string, unknown>)).join('\n')}\n`;
  }
  const record = value as Record<string, unknown>;
  const lines = Object.entries(record).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(' ') : String(v)}`);
  const secretShown = 'clientSecret' in record || command.name === 'clients.rotate-webhook-secret';
  if (secretShown) lines.push('', 'Store the secrets now: they are not shown again.');
  return `${lines.join('\n')}\n`;
}

function line(c: Record<string, unknown>): string {
  const scopes = Array.isArray(c.scopes) ? c.scopes.join(' ') : '';
  return [c.clientId, c.status, c.name, scopes, c.createdAt].map(String).join('\t');
}
