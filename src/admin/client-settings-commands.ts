import {
  applySettingsChange,
  withoutTemplate,
  withoutTestNumber,
  withTemplate,
  withTestNumber,
  type ClientSettings,
  type ClientSettingsView,
  type SettingsChange,
  type TextPolicy,
} from '../domain/client-settings.js';
import { maskedSecret } from '../domain/captcha.js';
import { hasBudget, type Budget, type PeriodSpend } from '../domain/budgets.js';
import { parseE164 } from '../domain/phone.js';
import { defaultWords, voiceLanguage, voiceSentence } from '../domain/spoken-code.js';
import { voiceFrame, withoutVoiceTemplate, withVoiceTemplate } from '../domain/voice-template.js';
import type { ClientService } from '../oauth/client-service.js';

/** The commands of a client's settings (contract 9): `clients show|update|templates|test-numbers`. */
export type ClientSettingsCommand =
  | { readonly name: 'clients.show'; readonly id: string }
  | { readonly name: 'clients.update'; readonly id: string; readonly change: SettingsChange }
  | { readonly name: 'clients.templates.set'; readonly id: string; readonly locale: string; readonly template: string; readonly channel?: TemplateChannel }
  | { readonly name: 'clients.templates.list'; readonly id: string; readonly channel?: TemplateChannel }
  | { readonly name: 'clients.templates.remove'; readonly id: string; readonly locale: string; readonly channel?: TemplateChannel }
  /** What `templates set` would save and a user would read (or a call say), without saving it (the console's live preview). */
  | { readonly name: 'clients.templates.preview'; readonly id: string; readonly locale: string; readonly template: string; readonly channel?: TemplateChannel }
  | { readonly name: 'clients.test-numbers.add'; readonly id: string; readonly number: string; readonly code: string }
  | { readonly name: 'clients.test-numbers.list'; readonly id: string }
  | { readonly name: 'clients.test-numbers.remove'; readonly id: string; readonly number: string };

export const clientSettingsCommandNames: readonly ClientSettingsCommand['name'][] = [
  'clients.show',
  'clients.update',
  'clients.templates.set',
  'clients.templates.list',
  'clients.templates.remove',
  'clients.templates.preview',
  'clients.test-numbers.add',
  'clients.test-numbers.list',
  'clients.test-numbers.remove',
];

export function isClientSettingsCommandName(name: unknown): name is ClientSettingsCommand['name'] {
  return (clientSettingsCommandNames as readonly unknown[]).includes(name);
}

/** Whether an operator command is one of a client's settings. */
export function isClientSettingsCommand(command: { readonly name: string }): command is ClientSettingsCommand {
  return isClientSettingsCommandName(command.name);
}

type Result = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** Checks a settings command that came over the admin socket (untyped JSON); an error text when it is not one. */
export function parseClientSettingsCommand(c: Record<string, unknown>): ClientSettingsCommand | string {
  const name = c.name;
  if (!isClientSettingsCommandName(name)) return `unknown command ${String(name)}`;
  if (typeof c.id !== 'string') return `${name} needs a client id`;
  const id = c.id;
  const text = (key: string): string | null => (typeof c[key] === 'string' ? (c[key] as string) : null);
  switch (name) {
    case 'clients.show':
    case 'clients.test-numbers.list':
      return { name, id };
    case 'clients.templates.list':
      return { name, id, ...channelOf(c.channel) };
    case 'clients.update': {
      const change = parseChange(c.change);
      return typeof change === 'string' ? change : { name, id, change };
    }
    case 'clients.templates.set': {
      const locale = text('locale');
      const template = text('template');
      return locale !== null && template !== null ? { name, id, locale, template, ...channelOf(c.channel) } : `${name} needs a locale and a template`;
    }
    case 'clients.templates.preview': {
      const locale = text('locale');
      const template = text('template');
      return locale !== null && template !== null ? { name, id, locale, template, ...channelOf(c.channel) } : `${name} needs a locale and a template`;
    }
    case 'clients.templates.remove': {
      const locale = text('locale');
      return locale !== null ? { name, id, locale, ...channelOf(c.channel) } : `${name} needs a locale`;
    }
    case 'clients.test-numbers.add': {
      const number = text('number');
      const code = text('code');
      return number !== null && code !== null ? { name, id, number, code } : `${name} needs a number and a code`;
    }
    case 'clients.test-numbers.remove': {
      const number = text('number');
      return number !== null ? { name, id, number } : `${name} needs a number`;
    }
  }
}

function parseChange(raw: unknown): SettingsChange | string {
  if (typeof raw !== 'object' || raw === null) return 'clients.update needs a change';
  const o = raw as Record<string, unknown>;
  const nullableText = (key: string): string | null | undefined | false =>
    o[key] === undefined ? undefined : o[key] === null ? null : typeof o[key] === 'string' ? (o[key] as string) : false;
  const change: Record<string, unknown> = {};
  for (const key of ['defaultWebhookUrl', 'appName', 'webotpDomain', 'androidAppHash', 'defaultLocale', 'dailySpendLimit', 'monthlySpendLimit']) {
    const value = nullableText(key);
    if (value === false) return `${key} must be text or null`;
    if (value !== undefined) change[key] = value;
  }
  if (o.captcha !== undefined) {
    const c = o.captcha as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null) return 'captcha must be an object';
    const ok =
      (c.provider === undefined || typeof c.provider === 'string') &&
      (c.secret === undefined || typeof c.secret === 'string') &&
      (c.minScore === undefined || typeof c.minScore === 'number') &&
      (c.when === undefined || typeof c.when === 'string');
    if (!ok) return 'captcha takes a provider, a secret and a when as text and a minScore as a number';
    change.captcha = c;
  }
  if (o.decision !== undefined) {
    const d = o.decision as Record<string, unknown> | null;
    if (typeof d !== 'object' || d === null) return 'decision must be an object';
    const ok =
      (d.url === undefined || d.url === null || typeof d.url === 'string') &&
      (d.timeoutMs === undefined || typeof d.timeoutMs === 'number') &&
      (d.fallback === undefined || typeof d.fallback === 'string');
    if (!ok) return 'decision takes a url (or null) and a fallback as text and a timeoutMs as a number';
    change.decision = d;
  }
  if (o.revealCode !== undefined) {
    if (typeof o.revealCode !== 'boolean') return 'revealCode must be true or false';
    change.revealCode = o.revealCode;
  }
  if (o.allowedCountries !== undefined) {
    if (o.allowedCountries !== null && !(Array.isArray(o.allowedCountries) && o.allowedCountries.every((r) => typeof r === 'string'))) {
      return 'allowedCountries must be a list of region codes or null';
    }
    change.allowedCountries = o.allowedCountries;
  }
  if (o.fallback !== undefined) {
    if (o.fallback !== null && !(Array.isArray(o.fallback) && o.fallback.every((t) => typeof t === 'string'))) {
      return 'fallback must be a list of request types or null';
    }
    change.fallback = o.fallback;
  }
  if (o.fallbackAfterSeconds !== undefined) {
    if (o.fallbackAfterSeconds !== null && typeof o.fallbackAfterSeconds !== 'number') return 'fallbackAfterSeconds must be a number or null';
    change.fallbackAfterSeconds = o.fallbackAfterSeconds;
  }
  return change as SettingsChange;
}

/** Which templates a command is about: the SMS texts (absent), or what voice calls say. */
export type TemplateChannel = 'voice';

/** `{ channel: 'voice' }` when the command names the voice templates. */
function channelOf(raw: unknown): { readonly channel?: TemplateChannel } {
  return raw === 'voice' ? { channel: 'voice' } : {};
}

/** What `clients templates set --channel voice` says: the template saved, and what a call would say. */
export interface VoiceTemplateSaved {
  readonly locale: string;
  readonly channel: 'voice';
  readonly sample: string;
}

/** What a call would say with a voice template just set: the sentence, with a code of nines. */
function voiceSaved(result: { readonly settings: ClientSettings; readonly locale: string }, policy: TextPolicy): VoiceTemplateSaved {
  const language = voiceLanguage(result.locale);
  const words = voiceFrame(result.settings, result.locale) ?? defaultWords(language);
  return { locale: result.locale, channel: 'voice', sample: voiceSentence(language, '9'.repeat(policy.codeLength), words) };
}

/** Settings as an operator reads them: the CAPTCHA secret is never shown in full. */
export function settingsView(settings: ClientSettings): ClientSettingsView {
  const { captcha } = settings;
  return {
    ...settings,
    captcha: captcha && { provider: captcha.provider, secret: maskedSecret(captcha.secret), minScore: captcha.minScore, when: captcha.when },
  };
}

/** What `clients templates set` says: the template saved, how it goes out, and what a user would read. */
export interface TemplateSaved {
  readonly locale: string;
  readonly encoding: 'GSM-7' | 'UCS-2';
  readonly parts: number;
  readonly sample: string;
}

/** A client's spend in today's and this month's periods, with its budgets (contract 17). */
export type SpendOf = (clientId: string, budget: Budget) => Promise<PeriodSpend[]>;

export async function runClientSettingsCommand(clients: ClientService, policy: TextPolicy, command: ClientSettingsCommand, spend?: SpendOf): Promise<Result> {
  const missing: Result = { ok: false, error: `no client ${command.id}` };
  const saved = async (edit: (s: ClientSettings) => ClientSettings | string): Promise<Result> => {
    const outcome = await clients.editSettings(command.id, edit);
    if (!outcome) return missing;
    return outcome.kind === 'refused' ? { ok: false, error: outcome.problem } : { ok: true, value: settingsView(outcome.settings) };
  };
  switch (command.name) {
    case 'clients.show': {
      const client = await clients.show(command.id);
      if (!client) return missing;
      // Spend is kept only for a client with a budget: without one there is nothing to show.
      const budgets = spend && hasBudget(client.settings.budget) ? await spend(command.id, client.settings.budget) : [];
      return { ok: true, value: { ...client, settings: settingsView(client.settings), budgets } };
    }
    case 'clients.update':
      return saved((s) => applySettingsChange(s, command.change, policy));
    case 'clients.templates.list': {
      const client = await clients.show(command.id);
      if (!client) return missing;
      return { ok: true, value: command.channel === 'voice' ? client.settings.voiceTemplates : client.settings.templates };
    }
    case 'clients.templates.set': {
      if (command.channel === 'voice') {
        let told: VoiceTemplateSaved | null = null;
        const outcome = await saved((s) => {
          const result = withVoiceTemplate(s, command.locale, command.template);
          if (typeof result === 'string') return result;
          told = voiceSaved(result, policy);
          return result.settings;
        });
        return outcome.ok && told ? { ok: true, value: told } : outcome;
      }
      let told: TemplateSaved | null = null;
      const outcome = await saved((s) => {
        const result = withTemplate(s, command.locale, command.template, policy);
        if (typeof result === 'string') return result;
        told = { locale: result.locale, encoding: result.check.encoding, parts: result.check.parts, sample: result.check.sample };
        return result.settings;
      });
      return outcome.ok && told ? { ok: true, value: told } : outcome;
    }
    case 'clients.templates.preview': {
      // The same check as `templates set`, on the client's settings as they are; nothing is saved.
      const client = await clients.show(command.id);
      if (!client) return missing;
      if (command.channel === 'voice') {
        const voice = withVoiceTemplate(client.settings, command.locale, command.template);
        return typeof voice === 'string' ? { ok: false, error: voice } : { ok: true, value: voiceSaved(voice, policy) };
      }
      const result = withTemplate(client.settings, command.locale, command.template, policy);
      if (typeof result === 'string') return { ok: false, error: result };
      const preview: TemplateSaved = { locale: result.locale, encoding: result.check.encoding, parts: result.check.parts, sample: result.check.sample };
      return { ok: true, value: preview };
    }
    case 'clients.templates.remove':
      return saved((s) => (command.channel === 'voice' ? withoutVoiceTemplate(s, command.locale) : withoutTemplate(s, command.locale)));
    case 'clients.test-numbers.list': {
      const client = await clients.show(command.id);
      return client ? { ok: true, value: client.settings.testNumbers } : missing;
    }
    case 'clients.test-numbers.add':
      return saved((s) => withTestNumber(s, parseE164(command.number.replace(/[\s()-]/g, ''))?.e164 ?? null, command.code));
    case 'clients.test-numbers.remove':
      return saved((s) => withoutTestNumber(s, parseE164(command.number.replace(/[\s()-]/g, ''))?.e164 ?? null));
  }
}
