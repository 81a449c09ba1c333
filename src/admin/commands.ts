import path from 'node:path';
import {
  isClientSettingsCommand,
  isClientSettingsCommandName,
  parseClientSettingsCommand,
  type SpendOf,
  runClientSettingsCommand,
  type ClientSettingsCommand,
} from './client-settings-commands.js';
import type { TextPolicy } from '../domain/client-settings.js';
import { isScope, knownScopes, type Scope } from '../domain/scopes.js';
import { deliveryStatuses, type DeliveryStatus } from '../domain/webhook-delivery.js';
import { isZitadelSigningKey, type ClientService, type HooksChange } from '../oauth/client-service.js';
import type { SqlWebhookStore } from '../store/webhook-store.js';
import { eventDetailView, eventView } from '../webhooks/delivery-log.js';
import type { Clock } from '../domain/ports.js';
import type { InboxSource } from '../inbox/inbox-message.js';
import type { CountryThrottles, PrefixBlocks } from './prefix-blocks.js';
import type { StatsService } from '../domain/stats-service.js';
import { isUuid } from '../store/uuid.js';
import { isListCommandName, parseListCommand, runListCommand, type ListCommand, type ListDeps } from './list-commands.js';
import { isRuleCommandName, parseRuleCommand, runRuleCommand, type RuleCommand, type RuleDeps } from './rule-commands.js';
import { isRouteCommandName, parseRouteCommand, runRouteCommand, type RouteCommand, type RouteDeps } from './route-commands.js';
import { isPriceCommandName, parsePriceCommand, runPriceCommand, type PriceCommand, type PriceDeps } from './price-commands.js';
import { costGroupings, costReport, type CostGrouping, type CostStore } from '../domain/cost-report.js';
import type { OperatorService } from '../console/operator-service.js';
import { findVerifications, type VerificationSearchDeps } from './verification-search.js';
import { providerStatus, type ProviderStatusDeps } from './provider-status.js';
import { reducedNumber, type PersonalDataStore } from '../domain/personal-data.js';
import { isE164Form } from '../domain/phone.js';
import { maxAuditLimit, type AuditLog } from '../console/audit-log.js';

/** What the operator commands use. */
export interface AdminDeps {
  readonly clients: ClientService;
  readonly webhooks: Pick<SqlWebhookStore, 'list' | 'show' | 'replay'>;
  readonly clock: Clock;
  /** Events were made due by a replay: wake this process's delivery worker (others hear the NOTIFY or poll). */
  readonly eventsDue: () => void;
  /** What the log provider sent (`otp-service messages`). */
  readonly inbox: InboxSource;
  /** What template checks need: the longest code and the lifetime the text says. */
  readonly textPolicy: TextPolicy;
  /** Prefixes blocked by prefix velocity (`otp-service blocks`). */
  readonly prefixBlocks: PrefixBlocks;
  /** Countries throttled for their conversion (`otp-service blocks`). */
  readonly countryThrottles: CountryThrottles;
  /** Traffic per day and country (`otp-service stats`). */
  readonly stats: Pick<StatsService, 'forClient' | 'forAllClients' | 'factors'>;
  /** PUBLIC_BASE_URL, which the relays' addresses start with (`clients hooks`); null: paths only. */
  readonly publicBaseUrl: string | null;
  /** The embedded database's data folder as a crash would leave it, written to a file (`otp-service backup`). */
  readonly snapshot: (file: string) => Promise<number>;
  /** Block and allow lists (`otp-service lists`). */
  readonly lists: Omit<ListDeps, 'clientExists' | 'clock'>;
  /** The risk rules' modes (`otp-service rules`). */
  readonly rules: Omit<RuleDeps, 'clientExists' | 'clock'>;
  /** Routes (`otp-service routes`, contract 17). */
  readonly routes: Omit<RouteDeps, 'clock'>;
  /** Prices (`otp-service prices`, contract 17). */
  readonly prices: PriceDeps;
  /** The cost ledger (`otp-service costs`). */
  readonly costs: CostStore;
  /** A client's spend today and this month beside its budgets (`clients show`, contract 17). */
  readonly spend: SpendOf;
  /** Console operators (`otp-service operators`, contract 16). */
  readonly operators: Pick<OperatorService, 'create' | 'list' | 'disable' | 'newLink'>;
  /** The console's address, which one-time links start with: CONSOLE_ORIGIN, PUBLIC_BASE_URL or localhost:PORT. */
  readonly consoleOrigin: string;
  /** Every change, by whom (`otp-service audit`). */
  readonly audit: AuditLog;
  /** Verifications by id, number or reference, with their webhook events (`otp-service verifications find`). */
  readonly verificationSearch: VerificationSearchDeps;
  /** The providers configured, their circuit state, answer time and delivery rate (`otp-service providers`). */
  readonly providers: ProviderStatusDeps;
  /** Erasing a person's data (`otp-service erase`). */
  readonly personalData: PersonalDataStore;
}

/** An operator command, as the CLI parsed it; run in the CLI or, on the embedded database, in the server. */
export type AdminCommand =
  | ClientSettingsCommand
  | ListCommand
  | RuleCommand
  | RouteCommand
  | PriceCommand
  /** The cost ledger over days (both included; null: the defaults of GET /v1/stats), grouped `by`. */
  | { readonly name: 'costs'; readonly from: string | null; readonly to: string | null; readonly by: CostGrouping }
  /** Per risk rule: creates refused, sends shadowed, and how many of those were verified later (contract 18). */
  | { readonly name: 'verdicts'; readonly from: string | null; readonly to: string | null; readonly clientId: string | null }
  | { readonly name: 'clients.create'; readonly clientName: string; readonly scopes: readonly string[]; readonly revealCode?: boolean }
  | { readonly name: 'clients.list' }
  | { readonly name: 'clients.disable'; readonly id: string }
  | { readonly name: 'clients.rotate-secret'; readonly id: string }
  | { readonly name: 'clients.rotate-webhook-secret'; readonly id: string }
  /**
   * The relays' addresses and hook secret (contract 15), after the change: `enable` makes the secret, `disable`
   * turns the relays off; `zitadelSigningKey`: the key ZITADEL made for its HTTP SMS provider, kept to check its
   * signatures (null clears it).
   */
  | ({ readonly name: 'clients.hooks'; readonly id: string } & HooksChange)
  /** A new hook secret, the old one taken 24 h more. */
  | { readonly name: 'clients.rotate-hook-secret'; readonly id: string }
  | {
      readonly name: 'webhooks.list';
      readonly status: DeliveryStatus | null;
      readonly verificationId: string | null;
      readonly limit: number;
    }
  | { readonly name: 'webhooks.show'; readonly id: string }
  | { readonly name: 'webhooks.replay'; readonly id: string }
  /** Prefix blocks in force (contract 10). */
  | { readonly name: 'blocks.list' }
  /** Ends a prefix's block now. */
  | { readonly name: 'blocks.lift'; readonly prefix: string }
  /** Traffic per day and country of one client, or of every client (null); days null: the defaults of GET /v1/stats. */
  | {
      readonly name: 'stats';
      readonly clientId: string | null;
      readonly from: string | null;
      readonly to: string | null;
      /** Every client's rows also per provider of the latest send (`--by-provider`, the console's overview). */
      readonly byProvider?: boolean;
    }
  /** A copy of the embedded database's data folder, for `otp-service backup` while the server runs. */
  | { readonly name: 'database.snapshot'; readonly path: string }
  /** A console operator and their one-time link to set a password (contract 16). */
  | { readonly name: 'operators.create'; readonly email: string }
  | { readonly name: 'operators.list' }
  /** Disables an operator; their sessions end at once. */
  | { readonly name: 'operators.disable'; readonly id: string }
  /** A new one-time link for an operator, to set a new password (a lost one). */
  | { readonly name: 'operators.link'; readonly id: string }
  /** The newest audit log entries. */
  | { readonly name: 'audit.list'; readonly limit: number }
  /** Verifications by id, number (E.164) or reference, whichever client made them, each with its whole life. */
  | { readonly name: 'verifications.find'; readonly query: string }
  /** Each channel's providers: circuit state, answer time, the last day's delivery rate. */
  | { readonly name: 'providers.status' }
  /** Every trace of a number (E.164), of one client or all (contract 20). */
  | { readonly name: 'erase'; readonly phoneNumber: string; readonly clientId: string | null }
  /** The newest messages, newest first. */
  | { readonly name: 'messages.latest'; readonly to: string | null; readonly limit: number }
  /** Messages after a reader's place (InboxSource.recent), oldest first. */
  | {
      readonly name: 'messages.recent';
      readonly to: string | null;
      readonly afterId: number;
      readonly since: string;
      readonly limit: number;
    };

export type AdminResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** The most events `webhooks list` shows unless told otherwise, and the most it will show. */
export const defaultListLimit = 100;
export const maxListLimit = 10_000;
/** The most messages one `messages` read returns. */
export const maxMessageLimit = 1_000;

/** Checks an untyped command (from the admin socket) and returns it typed, or an error text. */
export function parseAdminCommand(input: unknown): AdminCommand | string {
  if (typeof input !== 'object' || input === null) return 'command must be an object';
  const c = input as Record<string, unknown>;
  if (isClientSettingsCommandName(c.name)) return parseClientSettingsCommand(c);
  if (isListCommandName(c.name)) return parseListCommand(c);
  if (isRuleCommandName(c.name)) return parseRuleCommand(c);
  if (isRouteCommandName(c.name)) return parseRouteCommand(c);
  if (isPriceCommandName(c.name)) return parsePriceCommand(c);
  switch (c.name) {
    case 'clients.create':
      if (typeof c.clientName !== 'string' || !Array.isArray(c.scopes)) return 'clients.create needs a name and scopes';
      if (c.revealCode !== undefined && typeof c.revealCode !== 'boolean') return 'revealCode must be true or false';
      return { name: c.name, clientName: c.clientName, scopes: c.scopes.map(String), ...(c.revealCode !== undefined && { revealCode: c.revealCode }) };
    case 'clients.list':
      return { name: c.name };
    case 'clients.disable':
    case 'clients.rotate-secret':
    case 'clients.rotate-webhook-secret':
    case 'clients.rotate-hook-secret':
      if (typeof c.id !== 'string') return `${c.name} needs a client id`;
      return { name: c.name, id: c.id };
    case 'clients.hooks': {
      if (typeof c.id !== 'string') return `${c.name} needs a client id`;
      for (const flag of ['enable', 'disable'] as const) {
        if (c[flag] !== undefined && typeof c[flag] !== 'boolean') return `${flag} must be true or false`;
      }
      if (c.enable === true && c.disable === true) return 'enable and disable cannot both be given';
      const key = c.zitadelSigningKey;
      if (key !== undefined && key !== null && (typeof key !== 'string' || !isZitadelSigningKey(key))) {
        return 'zitadelSigningKey must be the signing key ZITADEL showed (16 to 512 printable characters, no spaces), or null to clear it';
      }
      if (key !== undefined && c.disable === true) return 'disable forgets the ZITADEL signing key: give one or the other';
      return {
        name: c.name,
        id: c.id,
        ...(c.enable === true && { enable: true }),
        ...(c.disable === true && { disable: true }),
        ...(key !== undefined && { zitadelSigningKey: key }),
      };
    }
    case 'webhooks.list': {
      const status = c.status === null || c.status === undefined ? null : parseDeliveryStatus(String(c.status));
      if (status === undefined) return `--status must be one of: ${deliveryStatuses.join(', ')}`;
      if (c.verificationId !== null && c.verificationId !== undefined && typeof c.verificationId !== 'string') {
        return '--verification must be an id';
      }
      const limit = typeof c.limit === 'number' ? c.limit : defaultListLimit;
      if (!Number.isInteger(limit) || limit < 1 || limit > maxListLimit) return `--limit must be 1 to ${maxListLimit}`;
      return { name: c.name, status, verificationId: c.verificationId ?? null, limit };
    }
    case 'blocks.list':
      return { name: c.name };
    case 'blocks.lift':
      if (typeof c.prefix !== 'string') return 'blocks.lift needs a prefix';
      return { name: c.name, prefix: c.prefix };
    case 'stats': {
      const text = (v: unknown) => v === null || v === undefined || typeof v === 'string';
      if (!text(c.clientId) || !text(c.from) || !text(c.to)) return 'stats takes a client id and days as text';
      const or = (v: unknown) => (typeof v === 'string' ? v : null);
      return { name: c.name, clientId: or(c.clientId), from: or(c.from), to: or(c.to), ...(c.byProvider === true && { byProvider: true }) };
    }
    case 'costs': {
      const by = costGroupings.find((g) => g === c.by);
      const text = (v: unknown) => v === null || typeof v === 'string';
      if (by === undefined || !text(c.from) || !text(c.to)) return `costs takes days as text and a grouping (${costGroupings.join(', ')})`;
      return { name: c.name, from: c.from as string | null, to: c.to as string | null, by };
    }
    case 'verdicts': {
      const text = (v: unknown) => v === null || typeof v === 'string';
      if (!text(c.from) || !text(c.to) || !text(c.clientId)) return 'verdicts takes days and a client id as text';
      return { name: c.name, from: c.from as string | null, to: c.to as string | null, clientId: c.clientId as string | null };
    }
    case 'operators.create':
      if (typeof c.email !== 'string') return 'operators.create needs an email';
      return { name: c.name, email: c.email };
    case 'operators.list':
    case 'providers.status':
      return { name: c.name };
    case 'verifications.find':
      if (typeof c.query !== 'string' || c.query.trim() === '' || c.query.length > 200) return 'verifications.find needs an id, a number or a reference';
      return { name: c.name, query: c.query };
    case 'erase':
      if (typeof c.phoneNumber !== 'string' || (c.clientId !== null && typeof c.clientId !== 'string')) return 'erase needs a number and a client id or null';
      return { name: c.name, phoneNumber: c.phoneNumber, clientId: c.clientId };
    case 'operators.disable':
    case 'operators.link':
      if (typeof c.id !== 'string') return `${c.name} needs an operator id`;
      return { name: c.name, id: c.id };
    case 'audit.list': {
      const limit = c.limit;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > maxAuditLimit) return `--limit must be 1 to ${maxAuditLimit}`;
      return { name: c.name, limit };
    }
    case 'database.snapshot':
      if (typeof c.path !== 'string' || !path.isAbsolute(c.path)) return 'database.snapshot needs an absolute path';
      return { name: c.name, path: c.path };
    case 'webhooks.show':
    case 'webhooks.replay':
      if (typeof c.id !== 'string') return `${c.name} needs an event id`;
      return { name: c.name, id: c.id };
    case 'messages.latest':
    case 'messages.recent': {
      if (c.to !== null && typeof c.to !== 'string') return '--to must be a phone number';
      const limit = c.limit;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > maxMessageLimit) {
        return `--limit must be 1 to ${maxMessageLimit}`;
      }
      if (c.name === 'messages.latest') return { name: c.name, to: c.to, limit };
      if (typeof c.afterId !== 'number' || !Number.isInteger(c.afterId) || typeof c.since !== 'string' || Number.isNaN(Date.parse(c.since))) {
        return 'messages.recent needs afterId and since';
      }
      return { name: c.name, to: c.to, afterId: c.afterId, since: c.since, limit };
    }
    default:
      return `unknown command ${String(c.name)}`;
  }
}

/** `otp-service stats`: the figures of GET /v1/stats, of one client (which must exist) or of all, each row naming its client. */
async function stats(deps: AdminDeps, command: Extract<AdminCommand, { name: 'stats' }>): Promise<AdminResult> {
  const query = { from: command.from ?? undefined, to: command.to ?? undefined };
  const { clientId } = command;
  if (clientId !== null && !(await deps.clients.show(clientId))) return { ok: false, error: `no client ${clientId}` };
  if (command.byProvider === true && clientId !== null) return { ok: false, error: '--by-provider counts every client: leave out --client' };
  const outcome = clientId === null ? await deps.stats.forAllClients(query, command.byProvider === true) : await deps.stats.forClient(clientId, query);
  if (outcome.kind === 'invalid') return { ok: false, error: outcome.problems.map((p) => `--${p.field} ${p.issue}`).join('; ') };
  return { ok: true, value: { from: outcome.range.from, to: outcome.range.to, rows: outcome.rows } };
}

/** A delivery status by name; undefined when there is no such status. */
export function parseDeliveryStatus(raw: string): DeliveryStatus | undefined {
  return deliveryStatuses.find((s) => s === raw);
}

export async function runAdminCommand(deps: AdminDeps, command: AdminCommand): Promise<AdminResult> {
  const { clients, webhooks, clock } = deps;
  if (isClientSettingsCommand(command)) return runClientSettingsCommand(clients, deps.textPolicy, command, deps.spend);
  const found = (value: unknown, id: string): AdminResult =>
    value ? { ok: true, value } : { ok: false, error: `no client ${id}` };
  switch (command.name) {
    case 'lists.add':
    case 'lists.remove':
    case 'lists.show':
      return runListCommand({ ...deps.lists, clock, clientExists: async (id) => (await clients.show(id)) !== null }, command);
    case 'rules.list':
    case 'rules.set':
      return runRuleCommand({ ...deps.rules, clock, clientExists: async (id) => (await clients.show(id)) !== null }, command);
    case 'routes.set':
    case 'routes.remove':
    case 'routes.list':
      return runRouteCommand({ ...deps.routes, clock }, command);
    case 'clients.create': {
      const name = command.clientName.trim();
      if (name.length === 0 || name.length > 200) return { ok: false, error: '--name must be 1 to 200 characters' };
      const unknown = command.scopes.filter((s) => !isScope(s));
      if (unknown.length > 0) {
        const words = unknown.map((w) => `"${w}"`).join(', ');
        return {
          ok: false,
          error: `unknown scope${unknown.length > 1 ? 's' : ''} ${words}; --scopes takes some of: ${knownScopes.join(' ')}`,
        };
      }
      if (command.scopes.length === 0) return { ok: false, error: `--scopes must name some of: ${knownScopes.join(' ')}` };
      return { ok: true, value: await clients.create(name, command.scopes as Scope[], command.revealCode) };
    }
    case 'clients.list':
      return { ok: true, value: await clients.list() };
    case 'clients.disable':
      return found(await clients.disable(command.id), command.id);
    case 'clients.rotate-secret':
      return found(await clients.rotateSecret(command.id), command.id);
    case 'clients.rotate-webhook-secret':
      return found(await clients.rotateWebhookSecret(command.id), command.id);
    case 'clients.hooks': {
      const { name: _name, id, ...change } = command;
      return found(await clients.hooks(id, deps.publicBaseUrl, change), id);
    }
    case 'clients.rotate-hook-secret': {
      const rotated = await clients.rotateHookSecret(command.id, deps.publicBaseUrl);
      if (rotated === 'off') return { ok: false, error: `client ${command.id}'s relays are off: turn them on with clients hooks ${command.id} --enable` };
      return found(rotated, command.id);
    }
    case 'webhooks.list': {
      const events = await webhooks.list({
        limit: command.limit,
        ...(command.status && { status: command.status }),
        ...(command.verificationId !== null && { verificationId: command.verificationId }),
      });
      const now = clock.now();
      return { ok: true, value: events.map((e) => eventView(e, now)) };
    }
    case 'webhooks.show': {
      const event = await webhooks.show(command.id);
      return event ? { ok: true, value: eventDetailView(event, clock.now()) } : { ok: false, error: `no event ${command.id}` };
    }
    case 'blocks.list': {
      const now = clock.now();
      return {
        ok: true,
        value: [...(await deps.prefixBlocks.list(now)), ...(await deps.countryThrottles.list(now)), ...(await deps.countryThrottles.listClients(now))],
      };
    }
    case 'blocks.lift': {
      const prefix = command.prefix.trim();
      if (isUuid(prefix)) {
        return (await deps.countryThrottles.liftClient(prefix, clock.now()))
          ? { ok: true, value: { lifted: prefix } }
          : { ok: false, error: `no throttle in force on client ${prefix}` };
      }
      if (/^([A-Za-z]{2}|001)$/.test(prefix)) {
        const country = prefix.toUpperCase();
        return (await deps.countryThrottles.lift(country, clock.now())) > 0
          ? { ok: true, value: { lifted: country } }
          : { ok: false, error: `no throttle in force on ${country}` };
      }
      if (!/^\+\d{4,12}$/.test(prefix)) return { ok: false, error: `a prefix is + and the number's digits less the last 3 (+2348031234), a country its ISO code (NG), not "${prefix}"` };
      return (await deps.prefixBlocks.lift(prefix, clock.now()))
        ? { ok: true, value: { lifted: prefix } }
        : { ok: false, error: `no block in force on ${prefix}` };
    }
    case 'stats':
      return stats(deps, command);
    case 'costs': {
      const report = await costReport(deps.costs, command.by, { from: command.from ?? undefined, to: command.to ?? undefined }, clock.now());
      if (report.kind === 'invalid') return { ok: false, error: report.problems.map((p) => `--${p.field} ${p.issue}`).join('; ') };
      return { ok: true, value: report.rows };
    }
    case 'verdicts': {
      if (command.clientId !== null && !(isUuid(command.clientId) && (await clients.show(command.clientId)))) return { ok: false, error: `no client ${command.clientId}` };
      const report = await deps.stats.factors(command.clientId, { from: command.from ?? undefined, to: command.to ?? undefined });
      if (report.kind === 'invalid') return { ok: false, error: report.problems.map((p) => `--${p.field} ${p.issue}`).join('; ') };
      return { ok: true, value: report.rows };
    }
    case 'prices.import':
    case 'prices.remove':
    case 'prices.list':
      return runPriceCommand(deps.prices, command);
    case 'operators.create':
    case 'operators.link': {
      const made = command.name === 'operators.create' ? await deps.operators.create(command.email) : await deps.operators.newLink(command.id);
      if (made === null) return { ok: false, error: `no operator ${command.name === 'operators.link' ? command.id : ''} enabled` };
      if (typeof made === 'string') return { ok: false, error: made };
      // The token rides in the fragment, which the browser never sends: it reaches no server or proxy log.
      return { ok: true, value: { ...made.operator, link: `${deps.consoleOrigin}/console/setup#${made.token}`, linkExpiresAt: made.expiresAt } };
    }
    case 'operators.list':
      return { ok: true, value: await deps.operators.list() };
    case 'operators.disable':
      return (await deps.operators.disable(command.id)) ? { ok: true, value: { disabled: command.id } } : { ok: false, error: `no operator ${command.id}` };
    case 'audit.list':
      return { ok: true, value: await deps.audit.latest(command.limit) };
    case 'providers.status':
      return { ok: true, value: await providerStatus(deps.providers, clock.now()) };
    case 'erase': {
      if (!isE164Form(command.phoneNumber)) return { ok: false, error: '--phone takes a number in E.164 (+2348031234567)' };
      if (command.clientId !== null && !(await clients.show(command.clientId))) return { ok: false, error: `no client ${command.clientId}` };
      const erased = await deps.personalData.erase({ kind: 'number', phoneNumber: command.phoneNumber, clientId: command.clientId });
      return { ok: true, value: { phoneNumber: reducedNumber(command.phoneNumber), clientId: command.clientId, ...erased } };
    }
    case 'verifications.find':
      return { ok: true, value: await findVerifications(deps.verificationSearch, command.query, clock.now()) };
    case 'database.snapshot':
      return { ok: true, value: { bytes: await deps.snapshot(command.path) } };
    case 'messages.latest':
      return { ok: true, value: await deps.inbox.latest(command.limit, command.to) };
    case 'messages.recent':
      return {
        ok: true,
        value: await deps.inbox.recent(command.afterId, new Date(command.since), command.limit, command.to),
      };
    case 'webhooks.replay': {
      const now = clock.now();
      const outcome = await webhooks.replay(command.id, now);
      switch (outcome.kind) {
        case 'replayed':
          deps.eventsDue();
          return { ok: true, value: eventView(outcome.event, now) };
        case 'not-found':
          return { ok: false, error: `no event ${command.id}` };
        case 'no-destination':
          return { ok: false, error: `event ${command.id} has no webhook URL: there is nothing to send it to` };
        case 'in-flight':
          return {
            ok: false,
            error: `event ${command.id} is being delivered now (until ${outcome.leaseUntil.toISOString()} at the latest); try again after`,
          };
      }
    }
  }
}
