import { parseListValue, type ListEntry, type ListKind, type NumberListStore } from '../domain/number-lists.js';
import type { Clock } from '../domain/ports.js';
import { isUuid } from '../store/uuid.js';

/** `otp-service lists block|allow add|remove VALUE [--client ID] [--note TEXT]` and `lists show` (contract 14). */
export type ListCommand =
  | { readonly name: 'lists.add'; readonly kind: ListKind; readonly value: string; readonly clientId: string | null; readonly note: string | null }
  | { readonly name: 'lists.remove'; readonly kind: ListKind; readonly value: string; readonly clientId: string | null }
  | { readonly name: 'lists.show' };

/** What the list commands use. */
export interface ListDeps {
  readonly store: NumberListStore;
  /** Reads the lists again in this process, so that its creates see a change at once. */
  readonly changed: () => Promise<void>;
  /** Whether a client exists. */
  readonly clientExists: (id: string) => Promise<boolean>;
  readonly clock: Clock;
}

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export function isListCommandName(name: unknown): name is ListCommand['name'] {
  return name === 'lists.add' || name === 'lists.remove' || name === 'lists.show';
}

/** Checks a list command that came over the admin socket (untyped JSON); an error text when it is not one. */
export function parseListCommand(c: Record<string, unknown>): ListCommand | string {
  if (c.name === 'lists.show') return { name: 'lists.show' };
  if (c.kind !== 'block' && c.kind !== 'allow') return `${String(c.name)} needs a kind, block or allow`;
  if (typeof c.value !== 'string') return `${String(c.name)} needs a value`;
  const clientId = typeof c.clientId === 'string' ? c.clientId : null;
  if (c.name === 'lists.remove') return { name: 'lists.remove', kind: c.kind, value: c.value, clientId };
  if (c.name === 'lists.add') return { name: 'lists.add', kind: c.kind, value: c.value, clientId, note: typeof c.note === 'string' ? c.note : null };
  return `unknown command ${String(c.name)}`;
}

/** An entry as `lists show --json` prints it. */
function entryView(e: ListEntry): { value: string; clientId: string | null; note: string | null; createdAt: string } {
  return { value: e.value, clientId: e.clientId, note: e.note, createdAt: e.createdAt.toISOString() };
}

export async function runListCommand(deps: ListDeps, command: ListCommand): Promise<Result> {
  if (command.name === 'lists.show') {
    const all = await deps.store.all();
    return {
      ok: true,
      value: { blocks: all.filter((e) => e.kind === 'block').map(entryView), allows: all.filter((e) => e.kind === 'allow').map(entryView) },
    };
  }
  const value = parseListValue(command.value);
  if (value === null) return { ok: false, error: `a list value is + and the digits of a number or of its start (+2348030), not "${command.value}"` };
  if (command.clientId !== null && !(isUuid(command.clientId) && (await deps.clientExists(command.clientId)))) {
    return { ok: false, error: `no client ${command.clientId}` };
  }
  const scope = command.clientId === null ? 'every client' : `client ${command.clientId}`;
  if (command.name === 'lists.remove') {
    if (!(await deps.store.remove(command.kind, value, command.clientId))) return { ok: false, error: `${value} is not on the ${command.kind} list of ${scope}` };
    await deps.changed();
    return { ok: true, value: { removed: value, kind: command.kind, clientId: command.clientId } };
  }
  const note = command.note?.trim() ?? null;
  if (note !== null && (note.length > 500 || note.includes('\u0000'))) return { ok: false, error: '--note must be at most 500 characters of text' };
  const entry: ListEntry = { kind: command.kind, value, clientId: command.clientId, note: note || null, createdAt: deps.clock.now() };
  const added = await deps.store.add(entry);
  await deps.changed();
  return { ok: true, value: { [added ? 'added' : 'updated']: value, kind: command.kind, clientId: command.clientId, note: entry.note, scope } };
}
