import { isScope, knownScopes, type Scope } from '../domain/scopes.js';
import type { Services } from '../services.js';

/** An operator command, as the CLI parsed it; run in the CLI or, on the embedded database, in the server. */
export type AdminCommand =
  | { readonly name: 'clients.create'; readonly clientName: string; readonly scopes: readonly string[] }
  | { readonly name: 'clients.list' }
  | { readonly name: 'clients.disable'; readonly id: string }
  | { readonly name: 'clients.rotate-secret'; readonly id: string }
  | { readonly name: 'clients.rotate-webhook-secret'; readonly id: string };

export type AdminResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** Checks an untyped command (from the admin socket) and returns it typed, or an error text. */
export function parseAdminCommand(input: unknown): AdminCommand | string {
  if (typeof input !== 'object' || input === null) return 'command must be an object';
  const c = input as Record<string, unknown>;
  switch (c.name) {
    case 'clients.create':
      if (typeof c.clientName !== 'string' || !Array.isArray(c.scopes)) return 'clients.create needs a name and scopes';
      return { name: c.name, clientName: c.clientName, scopes: c.scopes.map(String) };
    case 'clients.list':
      return { name: c.name };
    case 'clients.disable':
    case 'clients.rotate-secret':
    case 'clients.rotate-webhook-secret':
      if (typeof c.id !== 'string') return `${c.name} needs a client id`;
      return { name: c.name, id: c.id };
    default:
      return `unknown command ${String(c.name)}`;
  }
}

export async function runAdminCommand(services: Services, command: AdminCommand): Promise<AdminResult> {
  const { clients } = services;
  const found = (value: unknown, id: string): AdminResult =>
    value ? { ok: true, value } : { ok: false, error: `no client ${id}` };
  switch (command.name) {
    case 'clients.create': {
      const name = command.clientName.trim();
      if (name.length === 0 || name.length > 200) return { ok: false, error: '--name must be 1 to 200 characters' };
      const unknown = command.scopes.filter((s) => !isScope(s));
      if (unknown.length > 0 || command.scopes.length === 0) {
        return { ok: false, error: `--scopes must name some of: ${knownScopes.join(' ')}` };
      }
      return { ok: true, value: await clients.create(name, command.scopes as Scope[]) };
    }
    case 'clients.list':
      return { ok: true, value: await clients.list() };
    case 'clients.disable':
      return found(await clients.disable(command.id), command.id);
    case 'clients.rotate-secret':
      return found(await clients.rotateSecret(command.id), command.id);
    case 'clients.rotate-webhook-secret':
      return found(await clients.rotateWebhookSecret(command.id), command.id);
  }
}
