import { canonicalLocale } from '../domain/client-settings.js';
import { asObject, nonEmptyString } from '../providers/http-provider.js';
import { metaLanguage, metaSettings } from '../providers/whatsapp/meta.js';
import { createTemplate, listTemplates, parseOneTap, type AuthenticationTemplate, type MetaAccount, type MetaAnswer } from '../providers/whatsapp/meta-templates.js';

/** `otp-service whatsapp template create|list`, as parsed. */
export interface WhatsAppCommand {
  readonly action: 'create' | 'list';
  /** --language (Meta's code, or a BCP 47 locale mapped as sends map it); en_US when absent. */
  readonly language: string;
  readonly oneTap: AuthenticationTemplate['oneTap'];
  readonly json: boolean;
}

/** Parses the words after `whatsapp`; a string says what is wrong. */
export function parseWhatsAppCommand(positionals: readonly string[], language: string | undefined, oneTap: string | undefined, json: boolean): WhatsAppCommand | string {
  const [, sub, action, ...rest] = positionals;
  if (sub !== 'template' || (action !== 'create' && action !== 'list') || rest.length > 0) return 'usage: otp-service whatsapp template create [--language en_US] [--one-tap PACKAGE:SIGNATURE_HASH] | template list';
  if (action === 'list' && (language !== undefined || oneTap !== undefined)) return '--language and --one-tap go with template create';
  let code = 'en_US';
  if (language !== undefined) {
    if (/^[a-z]{2,3}(_[A-Z]{2})?$/.test(language)) code = language;
    else {
      const locale = canonicalLocale(language);
      if (locale === null) return `--language: "${language}" is not a language code (en_US, pt_BR, fr)`;
      code = metaLanguage(locale);
    }
  }
  const tap = oneTap === undefined ? null : parseOneTap(oneTap);
  if (typeof tap === 'string') return tap;
  return { action, language: code, oneTap: tap, json };
}

/** The settings the template commands need, read as the start reads the meta provider's; a string names what is missing or wrong. */
function accountFrom(env: NodeJS.ProcessEnv): { account: MetaAccount; template: string } | string {
  const problems: string[] = [];
  const read = <T>(name: keyof typeof metaSettings, parse: (raw: string) => T): T | undefined => {
    const setting = metaSettings[name];
    const raw = env[name] === undefined || env[name] === '' ? setting.default : env[name];
    if (raw === undefined) {
      problems.push(`${name}: required by otp-service whatsapp template`);
      return undefined;
    }
    try {
      return parse(raw);
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`);
      return undefined;
    }
  };
  const accessToken = read('META_ACCESS_TOKEN', metaSettings.META_ACCESS_TOKEN.parse);
  const wabaId = read('META_WABA_ID', metaSettings.META_WABA_ID.parse);
  const baseUrl = read('META_BASE_URL', metaSettings.META_BASE_URL.parse);
  const apiVersion = read('META_API_VERSION', metaSettings.META_API_VERSION.parse);
  const template = read('WHATSAPP_TEMPLATE', metaSettings.WHATSAPP_TEMPLATE.parse);
  if (accessToken === undefined || wabaId === undefined || baseUrl === undefined || apiVersion === undefined || template === undefined) {
    return problems.join('\n');
  }
  return { account: { accessToken, wabaId, baseUrl, apiVersion }, template };
}

/** Runs the command: Meta's answer printed (as JSON with --json); exit 0 when Meta took it, 1 otherwise. */
export async function runWhatsApp(command: WhatsAppCommand, env: NodeJS.ProcessEnv, ttlSeconds: number, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  const settings = accountFrom(env);
  if (typeof settings === 'string') {
    err(`${settings}\n`);
    return 2;
  }
  const signal = AbortSignal.timeout(30_000);
  let answer: MetaAnswer;
  try {
    answer =
      command.action === 'create'
        ? await createTemplate(
            settings.account,
            { name: settings.template, language: command.language, oneTap: command.oneTap, expiryMinutes: Math.min(90, Math.max(1, Math.floor(ttlSeconds / 60))) },
            signal,
          )
        : await listTemplates(settings.account, signal);
  } catch (e) {
    err(`Meta could not be reached: ${(e as Error).message}\n`);
    return 1;
  }
  const ok = answer.status >= 200 && answer.status < 300;
  if (command.json || !ok || command.action === 'create') {
    (ok ? out : err)(`${command.json ? JSON.stringify(answer.body) : `${ok ? '' : `Meta answered HTTP ${answer.status}: `}${JSON.stringify(answer.body, null, 2)}`}\n`);
    return ok ? 0 : 1;
  }
  out(templateLines(answer.body));
  return 0;
}

/** One line a template: name, language, category, status. */
function templateLines(body: unknown): string {
  const list = asObject(body)?.data;
  const data: readonly unknown[] = Array.isArray(list) ? list : [];
  const field = (t: unknown, name: string): string => nonEmptyString(asObject(t)?.[name]) ?? '-';
  if (data.length === 0) return 'no templates\n';
  return `${data.map((t) => [field(t, 'name'), field(t, 'language'), field(t, 'category'), field(t, 'status')].join('  ')).join('\n')}\n`;
}
