import type { Clock } from '../domain/ports.js';
import { isRiskRule, isRuleMode, riskRules, type RiskRule, type RuleMode, type RuleModeEntry } from '../domain/risk.js';
import { isUuid } from '../store/uuid.js';

/** `otp-service rules list` and `rules set RULE enforce|shadow|off [--client ID]` (contract 18). */
export type RuleCommand =
  | { readonly name: 'rules.list' }
  | { readonly name: 'rules.set'; readonly rule: string; readonly mode: string; readonly clientId: string | null };

/** What the rule commands use. */
export interface RuleDeps {
  readonly store: {
    set(rule: RiskRule, clientId: string | null, mode: RuleMode, now: Date): Promise<void>;
    all(): Promise<RuleModeEntry[]>;
  };
  /** Reads the modes again in this process, so that its creates see a change at once. */
  readonly changed: () => Promise<void>;
  /** Whether a client exists. */
  readonly clientExists: (id: string) => Promise<boolean>;
  readonly clock: Clock;
}

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** A rule as `rules list --json` shows it: its service-wide mode and the clients' own. */
export interface RuleView {
  readonly rule: RiskRule;
  readonly factor: string;
  readonly mode: RuleMode;
  readonly clients: Record<string, RuleMode>;
}

export function isRuleCommandName(name: unknown): name is RuleCommand['name'] {
  return name === 'rules.list' || name === 'rules.set';
}

/** Checks a rule command that came over the admin socket (untyped JSON); an error text when it is not one. */
export function parseRuleCommand(c: Record<string, unknown>): RuleCommand | string {
  if (c.name === 'rules.list') return { name: 'rules.list' };
  if (typeof c.rule !== 'string' || typeof c.mode !== 'string') return 'rules.set needs a rule and a mode';
  return { name: 'rules.set', rule: c.rule, mode: c.mode, clientId: typeof c.clientId === 'string' ? c.clientId : null };
}

function views(entries: readonly RuleModeEntry[]): RuleView[] {
  return (Object.keys(riskRules) as RiskRule[]).map((rule) => ({
    rule,
    factor: riskRules[rule],
    mode: entries.find((e) => e.rule === rule && e.clientId === null)?.mode ?? 'enforce',
    clients: Object.fromEntries(entries.filter((e) => e.rule === rule && e.clientId !== null).map((e) => [e.clientId, e.mode])),
  }));
}

export async function runRuleCommand(deps: RuleDeps, command: RuleCommand): Promise<Result> {
  if (command.name === 'rules.list') return { ok: true, value: views(await deps.store.all()) };
  const { rule, mode, clientId } = command;
  if (!isRiskRule(rule)) return { ok: false, error: `no rule ${rule}: the rules are ${Object.keys(riskRules).join(', ')}` };
  if (!isRuleMode(mode)) return { ok: false, error: `a rule's mode is enforce, shadow or off, not "${mode}"` };
  if (clientId !== null && !(isUuid(clientId) && (await deps.clientExists(clientId)))) return { ok: false, error: `no client ${clientId}` };
  await deps.store.set(rule, clientId, mode, deps.clock.now());
  await deps.changed();
  return { ok: true, value: views(await deps.store.all()).find((v) => v.rule === rule) };
}
