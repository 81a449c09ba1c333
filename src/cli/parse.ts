import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { deliveryStatuses } from '../domain/webhook-delivery.js';
import { parseE164 } from '../domain/phone.js';
import type { SettingsChange } from '../domain/client-settings.js';
import {
  defaultListLimit,
  maxListLimit,
  maxMessageLimit,
  parseDeliveryStatus,
  type AdminCommand,
} from '../admin/commands.js';
import { defaultAuditLimit, maxAuditLimit } from '../console/audit-log.js';
import { helpFor, isGroup, usage } from './help.js';
import { costGroupings } from '../domain/cost-report.js';
import type { MessagesOptions } from './messages.js';
import type { DataCommand } from './backup.js';
import { parseWhatsAppCommand, type WhatsAppCommand } from './whatsapp.js';
import { isZitadelSigningKey } from '../oauth/client-service.js';

export class UsageError extends Error {}

export type ParsedCommand =
  | { readonly kind: 'admin'; readonly command: AdminCommand; readonly json: boolean }
  | { readonly kind: 'messages'; readonly options: MessagesOptions }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'worker' }
  | { readonly kind: 'data'; readonly command: DataCommand }
  | { readonly kind: 'whatsapp'; readonly command: WhatsAppCommand };

const optionSpec = {
  name: { type: 'string' },
  scopes: { type: 'string' },
  status: { type: 'string' },
  verification: { type: 'string' },
  limit: { type: 'string' },
  weights: { type: 'string' },
  policy: { type: 'string' },
  'failover-after': { type: 'string' },
  to: { type: 'string' },
  client: { type: 'string' },
  phone: { type: 'string' },
  from: { type: 'string' },
  'reveal-code': { type: 'string' },
  'zitadel-signing-key': { type: 'string' },
  'default-webhook': { type: 'string' },
  'allowed-countries': { type: 'string' },
  'app-name': { type: 'string' },
  'webotp-domain': { type: 'string' },
  'android-app-hash': { type: 'string' },
  'default-locale': { type: 'string' },
  fallback: { type: 'string' },
  'fallback-after': { type: 'string' },
  'daily-spend-limit': { type: 'string' },
  'monthly-spend-limit': { type: 'string' },
  locale: { type: 'string' },
  channel: { type: 'string' },
  code: { type: 'string' },
  language: { type: 'string' },
  'one-tap': { type: 'string' },
  note: { type: 'string' },
  email: { type: 'string' },
  captcha: { type: 'string' },
  'captcha-secret': { type: 'string' },
  'captcha-min-score': { type: 'string' },
  'captcha-when': { type: 'string' },
  'decision-url': { type: 'string' },
  'decision-timeout-ms': { type: 'string' },
  'decision-default': { type: 'string' },
  enable: { type: 'boolean', default: false },
  disable: { type: 'boolean', default: false },
  follow: { type: 'boolean', default: false },
  'by-provider': { type: 'boolean', default: false },
  by: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The command `argv` names; `readStdin` gives what a `-` value reads (a key kept out of the shell's history). */
export function parseCommand(argv: readonly string[], readStdin: () => string = () => fs.readFileSync(0, 'utf8')): ParsedCommand {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof optionSpec }>>;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: optionSpec });
  } catch (err) {
    // Node's own message suggests '--' tricks; say what was wrong and where help is.
    const option = /'(-[^']*)'/.exec((err as Error).message)?.[1];
    const [group] = argv.filter((a) => !a.startsWith('-'));
    const where = group && isGroup(group) ? `otp-service ${group} --help` : 'otp-service --help';
    throw new UsageError(`${option ? `unknown or incomplete option ${option}` : (err as Error).message}; see ${where}`);
  }
  const { values, positionals } = parsed;
  const [group, action] = positionals;
  if (group === 'help') return { kind: 'help', text: helpFor(action, positionals[2]) };
  if (values.help) return { kind: 'help', text: helpFor(group, action) };
  if (group === 'worker' && positionals.length === 1) return { kind: 'worker' };
  if (group === 'messages' && positionals.length === 1) return { kind: 'messages', options: messagesOptions(values) };
  if (group === 'backup' || group === 'restore' || group === 'move-to-postgres') return { kind: 'data', command: dataCommand(group, positionals, values) };
  if (group === 'whatsapp') {
    const command = parseWhatsAppCommand(positionals, values.language, values['one-tap'], values.json);
    if (typeof command === 'string') throw new UsageError(command);
    return { kind: 'whatsapp', command };
  }
  return { kind: 'admin', ...parseAdmin(positionals, values, readStdin) };
}

/** A price sheet's text: the file, or standard input for `-`. */
function readSheet(file: string, readStdin: () => string): string {
  try {
    return file === '-' ? readStdin() : fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

type Values = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof optionSpec }>>['values'];

function positiveLimit(raw: string | undefined, fallback: number, max: number): number {
  const limit = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new UsageError(`--limit must be a whole number from 1 to ${max}`);
  return limit;
}

function messagesOptions(values: Values): MessagesOptions {
  let to: string | null = null;
  if (values.to !== undefined) {
    const phone = parseE164(values.to.replace(/[\s()-]/g, ''));
    if (!phone) throw new UsageError(`--to must be a phone number in E.164 (+2348012345678), got "${values.to}"`);
    to = phone.e164;
  }
  return { to, limit: positiveLimit(values.limit, 20, maxMessageLimit), follow: values.follow, json: values.json };
}

function dataCommand(group: DataCommand['kind'], positionals: readonly string[], values: Values): DataCommand {
  const json = values.json;
  const help = `see otp-service ${group} --help`;
  switch (group) {
    case 'backup':
      if (!values.to || positionals.length !== 1) throw new UsageError(`backup needs --to FILE; ${help}`);
      return { kind: group, file: values.to, json };
    case 'restore':
      if (!values.from || positionals.length !== 1) throw new UsageError(`restore needs --from FILE; ${help}`);
      return { kind: group, file: values.from, json };
    case 'move-to-postgres': {
      const url = positionals[1];
      if (!url || positionals.length !== 2 || !/^postgres(ql)?:\/\//.test(url)) {
        throw new UsageError(`move-to-postgres needs the target as a PostgreSQL URL (postgres://user:password@host:5432/database); ${help}`);
      }
      return { kind: group, url, json };
    }
  }
}

function parseAdmin(positionals: readonly string[], values: Values, readStdin: () => string): { command: AdminCommand; json: boolean } {
  const [group, action, id] = positionals;
  const json = values.json;
  const needId = (): string => {
    if (!id) throw new UsageError(`${group} ${action} needs ${group === 'webhooks' ? 'an EVENT_ID' : 'a CLIENT_ID'}; see otp-service ${group} ${action} --help`);
    return id;
  };
  if (group === 'webhooks') {
    switch (action) {
      case 'list': {
        const status = values.status === undefined ? null : parseDeliveryStatus(values.status);
        if (status === undefined) throw new UsageError(`--status must be one of: ${deliveryStatuses.join(', ')}`);
        const limit = positiveLimit(values.limit, defaultListLimit, maxListLimit);
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
  if (group === 'stats' && action === undefined) {
    const byProvider = values['by-provider'] ? { byProvider: true } : {};
    return { command: { name: 'stats', clientId: values.client ?? null, from: values.from ?? null, to: values.to ?? null, ...byProvider }, json };
  }
  if (group === 'operators') {
    switch (action) {
      case 'create':
        if (!values.email || positionals.length !== 2) throw new UsageError('operators create needs --email; see otp-service operators --help');
        return { command: { name: 'operators.create', email: values.email }, json };
      case 'list':
        return { command: { name: 'operators.list' }, json };
      case 'disable':
      case 'link':
        if (!id) throw new UsageError(`operators ${action} needs an OPERATOR_ID; see otp-service operators --help`);
        return { command: { name: `operators.${action}`, id }, json };
    }
  }
  if (group === 'verifications' && action === 'find') {
    if (!id || positionals.length !== 3) throw new UsageError('verifications find needs an ID, a NUMBER (+2348031234567) or a REFERENCE; see otp-service verifications --help');
    return { command: { name: 'verifications.find', query: id }, json };
  }
  if (group === 'providers' && action === undefined) return { command: { name: 'providers.status' }, json };
  if (group === 'erase' && action === undefined) {
    if (!values.phone) throw new UsageError('erase needs --phone NUMBER (E.164, +2348031234567); see otp-service erase --help');
    return { command: { name: 'erase', phoneNumber: values.phone, clientId: values.client ?? null }, json };
  }
  if (group === 'audit' && action === undefined) {
    return { command: { name: 'audit.list', limit: positiveLimit(values.limit, defaultAuditLimit, maxAuditLimit) }, json };
  }
  if (group === 'blocks') {
    switch (action) {
      case 'list':
        return { command: { name: 'blocks.list' }, json };
      case 'lift':
        if (!id) throw new UsageError('blocks lift needs a PREFIX (+2348031234) or a COUNTRY (NG); see otp-service blocks lift --help');
        return { command: { name: 'blocks.lift', prefix: id }, json };
    }
  }
  if (group === 'lists') {
    if (action === 'show' && positionals.length === 2) return { command: { name: 'lists.show' }, json };
    const [, kind, change, value] = positionals;
    if ((kind === 'block' || kind === 'allow') && (change === 'add' || change === 'remove') && positionals.length === 4 && value !== undefined) {
      const clientId = values.client ?? null;
      if (change === 'remove') return { command: { name: 'lists.remove', kind, value, clientId }, json };
      return { command: { name: 'lists.add', kind, value, clientId, note: values.note ?? null }, json };
    }
    throw new UsageError('lists takes show, or block|allow add|remove VALUE (+2348030); see otp-service lists --help');
  }
  if (group === 'prices') {
    const [, , first, second, third] = positionals;
    if (action === 'list' && positionals.length === 2) return { command: { name: 'prices.list' }, json };
    if (action === 'import' && positionals.length === 3 && first !== undefined) return { command: { name: 'prices.import', csv: readSheet(first, readStdin), file: first }, json };
    if (action === 'remove' && positionals.length === 5 && first !== undefined && second !== undefined && third !== undefined) {
      return { command: { name: 'prices.remove', provider: first, channel: second, destination: third }, json };
    }
    throw new UsageError('prices takes list, import FILE.csv, or remove PROVIDER CHANNEL DESTINATION; see otp-service prices --help');
  }
  if (group === 'costs' && action === undefined) {
    const by = values.by ?? 'day';
    const grouping = costGroupings.find((g) => g === by);
    if (grouping === undefined) throw new UsageError(`--by is one of ${costGroupings.join(', ')}, not "${by}"; see otp-service costs --help`);
    return { command: { name: 'costs', from: values.from ?? null, to: values.to ?? null, by: grouping }, json };
  }
  if (group === 'verdicts' && action === undefined) {
    return { command: { name: 'verdicts', from: values.from ?? null, to: values.to ?? null, clientId: values.client ?? null }, json };
  }
  if (group === 'rules') {
    const [, , rule, mode] = positionals;
    if (action === 'list' && positionals.length === 2) return { command: { name: 'rules.list' }, json };
    if (action === 'set' && positionals.length === 4 && rule !== undefined && mode !== undefined) {
      return { command: { name: 'rules.set', rule, mode, clientId: values.client ?? null }, json };
    }
    throw new UsageError('rules takes list, or set RULE enforce|shadow|off [--client CLIENT_ID]; see otp-service rules --help');
  }
  if (group === 'routes') {
    const [, , channel, destination, providers] = positionals;
    if (action === 'list' && positionals.length === 2) return { command: { name: 'routes.list' }, json };
    if (action === 'remove' && positionals.length === 4 && channel !== undefined && destination !== undefined) {
      return { command: { name: 'routes.remove', channel, destination }, json };
    }
    if (action === 'set' && positionals.length === 5 && channel !== undefined && destination !== undefined && providers !== undefined) {
      const weights = values.weights === undefined ? null : values.weights.split(',').map((w) => (/^\s*\d+\s*$/.test(w) ? Number(w) : Number.NaN));
      if (weights?.some((w) => Number.isNaN(w))) throw new UsageError('--weights takes whole numbers, one a provider (80,20); see otp-service routes set --help');
      const failover = values['failover-after'];
      if (failover !== undefined && !/^\s*\d+\s*$/.test(failover)) throw new UsageError('--failover-after takes whole seconds (20); see otp-service routes set --help');
      const failoverAfterSeconds = failover === undefined ? null : Number(failover);
      const policy = values.policy === undefined ? {} : { policy: values.policy };
      return { command: { name: 'routes.set', channel, destination, providers: providers.split(','), weights, failoverAfterSeconds, ...policy }, json };
    }
    throw new UsageError('routes takes list, set CHANNEL DESTINATION PROVIDER[,PROVIDER...], or remove CHANNEL DESTINATION; see otp-service routes --help');
  }
  if (group === 'clients') {
    switch (action) {
      case 'create':
        if (!values.name || !values.scopes) throw new UsageError('clients create needs --name and --scopes; see otp-service clients create --help');
        const revealCode = revealCodeOption(values);
        return {
          command: {
            name: 'clients.create',
            clientName: values.name,
            scopes: values.scopes.split(/\s+/).filter(Boolean),
            ...(revealCode !== undefined && { revealCode }),
          },
          json,
        };
      case 'list':
        return { command: { name: 'clients.list' }, json };
      case 'show':
        return { command: { name: 'clients.show', id: needId() }, json };
      case 'update':
        return { command: { name: 'clients.update', id: needId(), change: settingsChange(values) }, json };
      case 'templates':
      case 'test-numbers':
        return { command: settingsListCommand(action, positionals.slice(2), values), json };
      case 'disable':
      case 'rotate-secret':
      case 'rotate-webhook-secret':
      case 'rotate-hook-secret':
        return { command: { name: `clients.${action}`, id: needId() }, json };
      case 'hooks': {
        const id = needId();
        if (values.enable && values.disable) throw new UsageError('clients hooks takes --enable or --disable, not both');
        const given = values['zitadel-signing-key'];
        if (given !== undefined && values.disable) throw new UsageError('--disable forgets the ZITADEL signing key: give --zitadel-signing-key or --disable');
        // `-`: read from stdin, so that the key stays out of the shell's history and the process list.
        const key = given === undefined || given === 'none' ? given : given === '-' ? readStdin().trim() : given;
        if (key !== undefined && key !== 'none' && !isZitadelSigningKey(key)) {
          throw new UsageError('--zitadel-signing-key takes the signing key ZITADEL showed for its HTTP SMS provider, or none to clear it');
        }
        return {
          command: {
            name: 'clients.hooks',
            id,
            ...(values.enable && { enable: true }),
            ...(values.disable && { disable: true }),
            ...(key !== undefined && { zitadelSigningKey: key === 'none' ? null : key }),
          },
          json,
        };
      }
    }
  }
  throw new UsageError(group && isGroup(group) ? helpFor(group, undefined) : usage());
}

/** `--reveal-code true|false`, on create and update. */
function revealCodeOption(values: Values): boolean | undefined {
  const reveal = values['reveal-code'];
  if (reveal === undefined) return undefined;
  if (reveal !== 'true' && reveal !== 'false') throw new UsageError('--reveal-code takes true or false');
  return reveal === 'true';
}

/** `clients update`'s options as a change: `none` clears a setting, `all` lifts the country list. */
function settingsChange(values: Values): SettingsChange {
  const cleared = (raw: string | undefined): string | null | undefined => (raw === undefined ? undefined : raw === 'none' ? null : raw);
  const change: { -readonly [K in keyof SettingsChange]: SettingsChange[K] } = {};
  const reveal = revealCodeOption(values);
  if (reveal !== undefined) change.revealCode = reveal;
  const countries = values['allowed-countries'];
  if (countries !== undefined) change.allowedCountries = countries === 'all' ? null : countries.split(',').map((c) => c.trim()).filter(Boolean);
  const texts = [
    ['default-webhook', 'defaultWebhookUrl'],
    ['app-name', 'appName'],
    ['webotp-domain', 'webotpDomain'],
    ['android-app-hash', 'androidAppHash'],
    ['default-locale', 'defaultLocale'],
    ['daily-spend-limit', 'dailySpendLimit'],
    ['monthly-spend-limit', 'monthlySpendLimit'],
  ] as const;
  for (const [option, key] of texts) {
    const value = cleared(values[option]);
    if (value !== undefined) change[key] = value;
  }
  const fallback = values.fallback;
  if (fallback !== undefined) change.fallback = fallback === 'none' ? null : fallback.split(',').map((t) => t.trim().toUpperCase()).filter(Boolean);
  const after = values['fallback-after'];
  if (after !== undefined) {
    if (after !== 'none' && !/^\d+$/.test(after)) throw new UsageError('--fallback-after takes whole seconds or none');
    change.fallbackAfterSeconds = after === 'none' ? null : Number(after);
  }
  const provider = values.captcha;
  const secret = values['captcha-secret'];
  const score = values['captcha-min-score'];
  const when = values['captcha-when'];
  if (provider !== undefined || secret !== undefined || score !== undefined || when !== undefined) {
    if (provider !== undefined && !['turnstile', 'hcaptcha', 'recaptcha', 'none'].includes(provider)) {
      throw new UsageError('--captcha takes turnstile, hcaptcha, recaptcha or none');
    }
    const minScore = score === undefined ? undefined : Number(score);
    if (minScore !== undefined && !(score !== '' && Number.isFinite(minScore))) throw new UsageError('--captcha-min-score takes a number from 0 to 1');
    change.captcha = {
      ...(provider !== undefined && { provider: provider as 'turnstile' | 'hcaptcha' | 'recaptcha' | 'none' }),
      ...(secret !== undefined && { secret }),
      ...(minScore !== undefined && { minScore }),
      ...(when !== undefined && { when }),
    };
  }
  const decisionUrl = cleared(values['decision-url']);
  const decisionTimeout = values['decision-timeout-ms'];
  const decisionDefault = values['decision-default'];
  if (decisionUrl !== undefined || decisionTimeout !== undefined || decisionDefault !== undefined) {
    if (decisionTimeout !== undefined && !/^\d+$/.test(decisionTimeout)) throw new UsageError('--decision-timeout-ms takes whole milliseconds (800)');
    change.decision = {
      ...(decisionUrl !== undefined && { url: decisionUrl }),
      ...(decisionTimeout !== undefined && { timeoutMs: Number(decisionTimeout) }),
      ...(decisionDefault !== undefined && { fallback: decisionDefault }),
    };
  }
  if (Object.keys(change).length === 0) throw new UsageError('clients update needs at least one option; see otp-service clients update --help');
  return change;
}

/** `clients templates set|list|remove ID ...` and `clients test-numbers add|list|remove ID ...`. */
function settingsListCommand(group: 'templates' | 'test-numbers', args: readonly string[], values: Values): AdminCommand {
  const [sub, id, value] = args;
  const help = `see otp-service clients ${group} --help`;
  if (!id) throw new UsageError(`clients ${group} ${sub ?? ''} needs a CLIENT_ID; ${help}`);
  if (group === 'templates') {
    if (values.channel !== undefined && values.channel !== 'sms' && values.channel !== 'voice') throw new UsageError(`--channel is sms (the default) or voice; ${help}`);
    // The SMS texts unless --channel voice: what voice calls say (contract 13).
    const channel = values.channel === 'voice' ? { channel: 'voice' as const } : {};
    switch (sub) {
      case 'list':
        return { name: 'clients.templates.list', id, ...channel };
      case 'set':
        if (!values.locale || value === undefined) throw new UsageError(`clients templates set needs --locale and the template text; ${help}`);
        return { name: 'clients.templates.set', id, locale: values.locale, template: value, ...channel };
      case 'remove':
        if (!values.locale) throw new UsageError(`clients templates remove needs --locale; ${help}`);
        return { name: 'clients.templates.remove', id, locale: values.locale, ...channel };
      case 'preview':
        if (!values.locale || value === undefined) throw new UsageError(`clients templates preview needs --locale and the template text; ${help}`);
        return { name: 'clients.templates.preview', id, locale: values.locale, template: value, ...channel };
    }
  } else {
    switch (sub) {
      case 'list':
        return { name: 'clients.test-numbers.list', id };
      case 'add':
        if (value === undefined || !values.code) throw new UsageError(`clients test-numbers add needs the NUMBER and --code; ${help}`);
        return { name: 'clients.test-numbers.add', id, number: value, code: values.code };
      case 'remove':
        if (value === undefined) throw new UsageError(`clients test-numbers remove needs the NUMBER; ${help}`);
        return { name: 'clients.test-numbers.remove', id, number: value };
    }
  }
  throw new UsageError(`clients ${group} takes ${group === 'templates' ? 'set, list or remove' : 'add, list or remove'}; ${help}`);
}
