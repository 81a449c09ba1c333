import { captchaProviders, captchaWhens, defaultMinScore, type CaptchaProvider, type CaptchaSetting } from './captcha.js';
import { smsParts } from './gsm7.js';
import { webhookUrlProblem } from './webhook-url.js';
import type { Budget } from './budgets.js';
import { decisionTimeoutProblem, defaultDecisionTimeoutMs, type DecisionSetting } from './decision.js';
import { parseAmount } from './money.js';
import { forbiddenCharacter } from './text-characters.js';

/**
 * What a client can set about its verifications (contract 9), managed with `otp-service clients update` and read
 * by the create path from the client directory's cache (no database read per create).
 */
export interface ClientSettings {
  /** `{app}` in templates, and named in the default text; null: not named. */
  readonly appName: string | null;
  /** WebOTP: adds the last line `@domain #code`, so a browser on that origin can fill the code in. */
  readonly webotpDomain: string | null;
  /** Android SMS Retriever: the app's 11-character hash, on its own line, so the app can read the SMS. */
  readonly androidAppHash: string | null;
  /** Used when a create gives no webhookUrl. */
  readonly defaultWebhookUrl: string | null;
  /** False: `otp` reads null in every answer and webhook (the code goes only to the phone). */
  readonly revealCode: boolean;
  /** ISO 3166 alpha-2 regions this client may verify numbers of; null: all (within ALLOWED_COUNTRIES). */
  readonly allowedCountries: readonly string[] | null;
  /** BCP 47 locale of its texts when a create names none (or none of its templates matches). */
  readonly defaultLocale: string | null;
  /** SMS text per BCP 47 locale, with `{code}` and optionally `{minutes}` and `{app}`. */
  readonly templates: Readonly<Record<string, string>>;
  /** What a voice call says per BCP 47 locale, with `{code}` (read digit by digit) once and optionally `{app}`. */
  readonly voiceTemplates: Readonly<Record<string, string>>;
  /** Test numbers (E.164) and their fixed codes: no provider, no limit, no quota. */
  readonly testNumbers: Readonly<Record<string, string>>;
  /** The workflow's later steps (request types) copied onto each create that names none (contract 13); []: none. */
  readonly fallback: readonly string[];
  /** Its FALLBACK_AFTER_SECONDS; null: the service's. */
  readonly fallbackAfterSeconds: number | null;
  /** Contract 14: creates need a `captchaToken` this provider accepts; null: no CAPTCHA. */
  readonly captcha: CaptchaSetting | null;
  /** What its sends may cost in a UTC day and month (contract 17, COST_CURRENCY); each null: no limit. */
  readonly budget: Budget;
  /** Its backend's say before each send (contract 18); null: not asked. */
  readonly decision: DecisionSetting | null;
}

/** Settings as an operator reads them (`clients show`, the console): the CAPTCHA secret only by its first characters. */
export type ClientSettingsView = Omit<ClientSettings, 'captcha'> & {
  readonly captcha: { readonly provider: string; readonly secret: string; readonly minScore: number; readonly when: string } | null;
};

export const defaultClientSettings: ClientSettings = {
  appName: null,
  webotpDomain: null,
  androidAppHash: null,
  defaultWebhookUrl: null,
  revealCode: true,
  allowedCountries: null,
  defaultLocale: null,
  templates: {},
  voiceTemplates: {},
  testNumbers: {},
  fallback: [],
  fallbackAfterSeconds: null,
  captcha: null,
  budget: { daily: null, monthly: null },
  decision: null,
};

/** What a template may hold: `{code}` (required), `{minutes}`, `{app}`. */
const placeholders = ['code', 'minutes', 'app'] as const;
/** A template longer than this many parts is refused: every part of every code is paid for. */
export const maxTemplateParts = 3;
const maxAppName = 40;

/** The values a template is rendered with. */
export interface TextValues {
  readonly code: string;
  /** The code's lifetime (OTP_TTL_SECONDS). */
  readonly seconds: number;
}

/** A locale as BCP 47 canonicalizes it (`fr-ca` -> `fr-CA`); null when it is not a well-formed tag. */
export function canonicalLocale(raw: string): string | null {
  if (raw.length === 0 || raw.length > 35) return null;
  try {
    return Intl.getCanonicalLocales(raw)[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * The template for a requested locale: that exact locale, then its language alone (`fr-CA` -> `fr`), then the
 * client's default locale the same way; null: the default English text.
 */
export function templateFor(
  settings: ClientSettings,
  requested: string | null,
  templates: Readonly<Record<string, string>> = settings.templates,
): string | null {
  for (const locale of [requested, settings.defaultLocale]) {
    if (locale === null) continue;
    const exact = templates[locale];
    if (exact !== undefined) return exact;
    const language = templates[locale.split('-')[0] ?? locale];
    if (language !== undefined) return language;
  }
  return null;
}

/** The SMS a user reads: the template (or the English default), then the Android hash and the WebOTP lines. */
export function renderSms(settings: ClientSettings, locale: string | null, values: TextValues): string {
  const template = templateFor(settings, locale);
  const body = template === null ? defaultText(settings.appName, values) : fill(template, settings.appName, values);
  const lines = [body];
  if (settings.androidAppHash !== null) lines.push(settings.androidAppHash);
  // WebOTP reads only the last line.
  if (settings.webotpDomain !== null) lines.push(`@${settings.webotpDomain} #${values.code}`);
  return lines.join('\n');
}

/** The code comes first so that phones can offer to fill it in; the lifetime is the real one. */
function defaultText(appName: string | null, { code, seconds }: TextValues): string {
  const whose = appName === null ? 'your verification code' : `your ${appName} verification code`;
  return `${code} is ${whose}. It expires in ${lifetime(seconds)}. Do not share it.`;
}

/**
 * A lifetime as the user reads it: in seconds under a minute, else in whole minutes, rounded down so that the
 * code never dies before the time the text promises.
 */
function lifetime(seconds: number): string {
  const whole = Math.max(1, Math.floor(seconds));
  if (whole < 60) return `${whole} second${whole === 1 ? '' : 's'}`;
  const minutes = lifetimeMinutes(whole);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** Fills the placeholders in one pass, so a value that looks like a placeholder is never filled again. */
function fill(template: string, appName: string | null, { code, seconds }: TextValues): string {
  return template.replace(/\{(code|minutes|app)\}/g, (_match, name: string) =>
    name === 'code' ? code : name === 'minutes' ? String(lifetimeMinutes(seconds)) : (appName ?? ''),
  );
}

/** `{minutes}` of a lifetime: whole minutes, rounded down, at least 1. */
export function lifetimeMinutes(seconds: number): number {
  return Math.max(1, Math.floor(seconds / 60));
}

export type TemplateCheck =
  | { readonly ok: true; readonly encoding: 'GSM-7' | 'UCS-2'; readonly parts: number; readonly sample: string }
  | { readonly ok: false; readonly problem: string };

/**
 * Checks a template before it is saved: `{code}` present, no other `{...}` than the known placeholders, and the
 * text as a user would get it (the longest code, with the client's app name, hash and WebOTP line) at most
 * `maxTemplateParts` SMS parts. Says the encoding and how many parts it takes.
 */
export function checkTemplate(template: string, settings: ClientSettings, codeLength: number, ttlSeconds: number): TemplateCheck {
  if (template.trim().length === 0) return { ok: false, problem: 'the template is empty' };
  if (!template.includes('{code}')) return { ok: false, problem: 'the template must contain {code}' };
  const forbidden = forbiddenCharacter(template, { lineFeeds: true });
  if (forbidden) return { ok: false, problem: `the template must not contain control or bidirectional formatting characters: it holds ${forbidden}` };
  for (const match of template.matchAll(/\{([^{}]*)\}/g)) {
    const name = match[1] ?? '';
    if (!(placeholders as readonly string[]).includes(name)) {
      return { ok: false, problem: `unknown placeholder {${name}}: use {code}, {minutes} or {app}` };
    }
  }
  const sample = renderSms({ ...settings, templates: { sample: template } }, 'sample', {
    code: '9'.repeat(Math.max(codeLength, 4)),
    seconds: ttlSeconds,
  });
  const { encoding, parts } = smsParts(sample);
  if (parts > maxTemplateParts) {
    return { ok: false, problem: `the text takes ${parts} SMS parts (${encoding}); at most ${maxTemplateParts} are allowed` };
  }
  return { ok: true, encoding, parts, sample };
}

/**
 * Why a caller's own SMS text (CAMARA's `message`, `{{code}}` where the code goes) is refused, or null: as a
 * template is, it must hold no control or bidirectional formatting characters and, with the longest code in it,
 * fit `maxTemplateParts` SMS parts.
 */
export function messageTextProblem(message: string, codeLength: number): string | null {
  const forbidden = forbiddenCharacter(message, { lineFeeds: true });
  if (forbidden) return `must not contain control or bidirectional formatting characters: it holds ${forbidden}`;
  const { encoding, parts } = smsParts(message.replaceAll('{{code}}', '9'.repeat(Math.max(codeLength, 4))));
  return parts > maxTemplateParts ? `takes ${parts} SMS parts (${encoding}) with the code in it; at most ${maxTemplateParts} are allowed` : null;
}

/** Why an app name is refused, or null. */
export function appNameProblem(name: string): string | null {
  if (name.trim().length === 0 || name.length > maxAppName) return `must be 1 to ${maxAppName} characters`;
  const forbidden = forbiddenCharacter(name, { lineFeeds: false });
  if (forbidden) return `must not contain control or bidirectional formatting characters: it holds ${forbidden}`;
  if (/[{}]/.test(name)) return 'must not contain braces';
  return null;
}

/** Why a WebOTP domain is refused, or null: a host name (no scheme, no port, no path). */
export function webotpDomainProblem(domain: string): string | null {
  return /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i.test(domain)
    ? null
    : 'must be a host name such as example.com (no scheme, port or path)';
}

/** Why an Android SMS Retriever hash is refused, or null: 11 characters of base64. */
export function androidAppHashProblem(hash: string): string | null {
  return /^[A-Za-z0-9+/]{11}$/.test(hash) ? null : 'must be the 11-character app hash (base64)';
}

/** Why a test number's fixed code is refused, or null. */
export function testCodeProblem(code: string): string | null {
  return /^\d{4,10}$/.test(code) ? null : 'must be 4 to 10 digits';
}

/** A region code as ISO 3166 alpha-2 (upper case); null when it is not two letters. */
export function regionCode(raw: string): string | null {
  const upper = raw.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(upper) ? upper : null;
}

/** A change to a client's settings from `clients update`: each field present is set (null clears it). */
export interface SettingsChange {
  readonly revealCode?: boolean;
  readonly defaultWebhookUrl?: string | null;
  readonly allowedCountries?: readonly string[] | null;
  readonly appName?: string | null;
  readonly webotpDomain?: string | null;
  readonly androidAppHash?: string | null;
  readonly defaultLocale?: string | null;
  /** Request types of the default workflow; null or []: none. */
  readonly fallback?: readonly string[] | null;
  /** Seconds; null: the service's FALLBACK_AFTER_SECONDS. */
  readonly fallbackAfterSeconds?: number | null;
  /**
   * `--captcha PROVIDER|none`, `--captcha-secret S`, `--captcha-min-score N`: a provider needs a secret (the
   * one it has is kept when the provider stays); the minimum score alone changes the one in force;
   * `--captcha-when always|throttled` whether every create needs a token or only one a throttle would refuse.
   */
  readonly captcha?: { readonly provider?: CaptchaProvider | 'none'; readonly secret?: string; readonly minScore?: number; readonly when?: string };
  /** `--daily-spend-limit 25.00|none`: in COST_CURRENCY; null removes it. */
  readonly dailySpendLimit?: string | null;
  /** `--monthly-spend-limit 500.00|none`. */
  readonly monthlySpendLimit?: string | null;
  /**
   * `--decision-url URL|none`, `--decision-timeout-ms N`, `--decision-default allow|deny`: the URL turns the decision
   * webhook on (null: off); the others change the one in force.
   */
  readonly decision?: { readonly url?: string | null; readonly timeoutMs?: number; readonly fallback?: string };
}

/**
 * What settings checks need to know of the service: the longest code and the lifetime the text says (templates),
 * the request types a workflow may take, and where webhooks may go.
 */
export interface TextPolicy {
  readonly codeLength: number;
  readonly ttlSeconds: number;
  /** The request types a workflow's later steps may take here (the channel registry's); absent: none checked. */
  readonly fallbackTypes?: readonly string[];
  /** Why a webhook can never be delivered to this URL here (WEBHOOK_ALLOWED_NETWORKS); absent: its form only. */
  readonly webhookUrlProblem?: (url: string) => string | null;
}

/** The longest FALLBACK_AFTER_SECONDS a client may set (a day). */
export const maxFallbackAfterSeconds = 86_400;

/**
 * Applies a change, checking every field; a problem names the option at fault. The templates are checked again
 * with the new app name, hash and WebOTP line, since those lines make every text longer.
 */
export function applySettingsChange(current: ClientSettings, change: SettingsChange, policy: TextPolicy): ClientSettings | string {
  const problems: string[] = [];
  const check = (option: string, value: string | null | undefined, problem: (v: string) => string | null) => {
    const why = value === null || value === undefined ? null : problem(value);
    if (why) problems.push(`${option} ${why}`);
  };
  check('--default-webhook', change.defaultWebhookUrl, (v) => (v.length > 2048 ? 'must be at most 2048 characters' : (policy.webhookUrlProblem ?? webhookUrlProblem)(v)));
  check('--app-name', change.appName, appNameProblem);
  check('--webotp-domain', change.webotpDomain, webotpDomainProblem);
  check('--android-app-hash', change.androidAppHash, androidAppHashProblem);
  let defaultLocale = change.defaultLocale;
  if (typeof defaultLocale === 'string') {
    const canonical = canonicalLocale(defaultLocale);
    if (canonical === null) problems.push('--default-locale must be a BCP 47 language tag such as fr or pt-BR');
    defaultLocale = canonical;
  }
  let allowedCountries = change.allowedCountries;
  if (allowedCountries) {
    const regions = allowedCountries.map(regionCode);
    const bad = allowedCountries.filter((_, i) => regions[i] === null);
    if (bad.length > 0) problems.push(`--allowed-countries takes ISO 3166 alpha-2 codes such as NG,GH (or all); not ${bad.join(', ')}`);
    allowedCountries = [...new Set(regions.filter((r): r is string => r !== null))].sort();
  }
  const fallback = change.fallback === null ? [] : change.fallback;
  if (fallback) {
    const allowed = policy.fallbackTypes;
    const bad = allowed ? fallback.filter((t) => !allowed.includes(t)) : [];
    if (bad.length > 0) problems.push(`--fallback takes request types from ${allowed?.join(', ') ?? ''} (or none); not ${bad.join(', ')}`);
    else if (fallback.length > 2 || new Set(fallback).size !== fallback.length) problems.push('--fallback takes at most 2 request types, none twice');
  }
  const after = change.fallbackAfterSeconds;
  if (typeof after === 'number' && !(Number.isInteger(after) && after >= 1 && after <= maxFallbackAfterSeconds)) {
    problems.push(`--fallback-after must be whole seconds from 1 to ${maxFallbackAfterSeconds} (or none)`);
  }
  const captcha = change.captcha === undefined ? undefined : captchaChange(current.captcha, change.captcha, problems);
  const limit = (option: string, raw: string | null | undefined): string | null | undefined => {
    if (raw === undefined || raw === null) return raw;
    const amount = parseAmount(raw);
    if (amount === null) problems.push(`${option} must be an amount in COST_CURRENCY such as 25.00 (or none)`);
    return amount;
  };
  const decision = change.decision === undefined ? undefined : decisionChange(current.decision, change.decision, policy, problems);
  const daily = limit('--daily-spend-limit', change.dailySpendLimit);
  const monthly = limit('--monthly-spend-limit', change.monthlySpendLimit);
  if (problems.length > 0) return problems.join('; ');
  const next: ClientSettings = {
    ...current,
    ...(captcha !== undefined && { captcha }),
    ...(decision !== undefined && { decision }),
    ...(change.revealCode !== undefined && { revealCode: change.revealCode }),
    ...(change.defaultWebhookUrl !== undefined && { defaultWebhookUrl: change.defaultWebhookUrl }),
    ...(allowedCountries !== undefined && { allowedCountries }),
    ...(change.appName !== undefined && { appName: change.appName }),
    ...(change.webotpDomain !== undefined && { webotpDomain: change.webotpDomain?.toLowerCase() ?? null }),
    ...(change.androidAppHash !== undefined && { androidAppHash: change.androidAppHash }),
    ...(defaultLocale !== undefined && { defaultLocale }),
    ...(fallback !== undefined && { fallback: [...fallback] }),
    ...(after !== undefined && { fallbackAfterSeconds: after }),
    ...((daily !== undefined || monthly !== undefined) && {
      budget: { daily: daily === undefined ? current.budget.daily : daily, monthly: monthly === undefined ? current.budget.monthly : monthly },
    }),
  };
  for (const [locale, template] of Object.entries(next.templates)) {
    const checked = checkTemplate(template, next, policy.codeLength, policy.ttlSeconds);
    if (!checked.ok) return `with this change the ${locale} template would no longer pass: ${checked.problem}`;
  }
  return next;
}

/** The decision webhook a change makes; each problem is added to `problems`. */
function decisionChange(
  current: DecisionSetting | null,
  change: NonNullable<SettingsChange['decision']>,
  policy: TextPolicy,
  problems: string[],
): DecisionSetting | null {
  if (change.url === null) return null;
  const url = change.url ?? current?.url;
  if (url === undefined) {
    problems.push('--decision-timeout-ms and --decision-default need a decision webhook: set --decision-url');
    return null;
  }
  const urlProblem = url.length > 2048 ? 'must be at most 2048 characters' : (policy.webhookUrlProblem ?? webhookUrlProblem)(url);
  if (urlProblem) problems.push(`--decision-url ${urlProblem}`);
  const timeoutMs = change.timeoutMs ?? current?.timeoutMs ?? defaultDecisionTimeoutMs;
  const timeoutProblem = decisionTimeoutProblem(timeoutMs);
  if (timeoutProblem) problems.push(`--decision-timeout-ms ${timeoutProblem}`);
  const fallback = change.fallback ?? current?.fallback ?? 'allow';
  if (fallback !== 'allow' && fallback !== 'deny') problems.push('--decision-default takes allow or deny');
  return { url, timeoutMs, fallback: fallback === 'deny' ? 'deny' : 'allow' };
}

/** The CAPTCHA setting a change makes; each problem is added to `problems`. */
function captchaChange(
  current: CaptchaSetting | null,
  change: NonNullable<SettingsChange['captcha']>,
  problems: string[],
): CaptchaSetting | null {
  if (change.provider === 'none') return null;
  const provider = change.provider ?? current?.provider;
  if (provider === undefined) {
    problems.push('--captcha-min-score needs a CAPTCHA: set --captcha turnstile|hcaptcha|recaptcha with --captcha-secret');
    return null;
  }
  if (!(captchaProviders as readonly string[]).includes(provider)) problems.push(`--captcha takes ${captchaProviders.join(', ')} or none`);
  const secret = change.secret ?? (current?.provider === provider ? current.secret : undefined);
  if (secret === undefined) problems.push(`--captcha ${provider} needs --captcha-secret (the secret key ${provider} gave you)`);
  else if (!/^[\x21-\x7e]{1,512}$/.test(secret)) problems.push('--captcha-secret must be 1 to 512 visible ASCII characters');
  const minScore = change.minScore ?? current?.minScore ?? defaultMinScore;
  if (!(Number.isFinite(minScore) && minScore >= 0 && minScore <= 1)) problems.push('--captcha-min-score must be a number from 0 to 1');
  const when = change.when ?? current?.when ?? 'always';
  if (!(captchaWhens as readonly string[]).includes(when)) problems.push(`--captcha-when takes ${captchaWhens.join(' or ')}`);
  return { provider, secret: secret ?? '', minScore, when: when === 'throttled' ? 'throttled' : 'always' };
}

/** Sets the template of a locale, checked; says how it went out (encoding, parts, a sample). */
export function withTemplate(
  current: ClientSettings,
  rawLocale: string,
  template: string,
  policy: TextPolicy,
): { readonly settings: ClientSettings; readonly locale: string; readonly check: Extract<TemplateCheck, { ok: true }> } | string {
  const locale = canonicalLocale(rawLocale);
  if (locale === null) return '--locale must be a BCP 47 language tag such as fr or pt-BR';
  const check = checkTemplate(template, current, policy.codeLength, policy.ttlSeconds);
  if (!check.ok) return check.problem;
  return { settings: { ...current, templates: { ...current.templates, [locale]: template } }, locale, check };
}

/** Removes the template of a locale; a problem when there is none. */
export function withoutTemplate(current: ClientSettings, rawLocale: string): ClientSettings | string {
  const locale = canonicalLocale(rawLocale) ?? rawLocale;
  if (current.templates[locale] === undefined) return `no template for ${locale}`;
  const { [locale]: _removed, ...templates } = current.templates;
  return { ...current, templates };
}

/** At most this many test numbers per client. */
export const maxTestNumbers = 100;

/** Adds (or changes the code of) a test number: `e164` as parsed by the phone parser, null when invalid. */
export function withTestNumber(current: ClientSettings, e164: string | null, code: string): ClientSettings | string {
  if (e164 === null) return 'the test number must be a valid phone number in E.164, e.g. +2348000000001';
  const bad = testCodeProblem(code);
  if (bad) return `--code ${bad}`;
  if (current.testNumbers[e164] === undefined && Object.keys(current.testNumbers).length >= maxTestNumbers) {
    return `a client has at most ${maxTestNumbers} test numbers`;
  }
  return { ...current, testNumbers: { ...current.testNumbers, [e164]: code } };
}

export function withoutTestNumber(current: ClientSettings, e164: string | null): ClientSettings | string {
  if (e164 === null || current.testNumbers[e164] === undefined) return 'no such test number';
  const { [e164]: _removed, ...testNumbers } = current.testNumbers;
  return { ...current, testNumbers };
}
