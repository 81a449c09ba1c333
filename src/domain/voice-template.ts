import { canonicalLocale, templateFor, type ClientSettings } from './client-settings.js';
import type { SpokenWords } from './spoken-code.js';
import { forbiddenCharacter } from './text-characters.js';

/**
 * A client's template for what a voice call says (contract 13: "the spoken words follow the client's template for
 * `voice` where one is set"), per locale like its SMS templates: `{code}` once, where the digits are read one by
 * one, and optionally `{app}`. Managed with `clients templates set ID --channel voice --locale fr "..."`.
 */

/** Longer than this is a speech, not a code. */
const maxLength = 200;

/** Why a voice template is refused, or null. */
export function voiceTemplateProblem(template: string): string | null {
  if (template.trim().length === 0) return 'the template is empty';
  if (template.length > maxLength) return `a voice template is at most ${maxLength} characters`;
  if (template.split('{code}').length !== 2) return 'a voice template must contain {code} exactly once';
  const forbidden = forbiddenCharacter(template, { lineFeeds: false });
  if (forbidden) return `the template must not contain control or bidirectional formatting characters: it holds ${forbidden}`;
  for (const match of template.matchAll(/\{([^{}]*)\}/g)) {
    const name = match[1] ?? '';
    if (name !== 'code' && name !== 'app') return `unknown placeholder {${name}}: a voice template takes {code} and {app}`;
  }
  return null;
}

/** The client's words around the code for a locale (its template, as templateFor finds one), or null: the default. */
export function voiceFrame(settings: ClientSettings, locale: string | null): SpokenWords | null {
  const template = templateFor(settings, locale, settings.voiceTemplates);
  if (template === null) return null;
  const filled = template.replace(/\{app\}/g, settings.appName ?? '');
  const [before = '', after = ''] = filled.split('{code}');
  // An unset {app} leaves no double space for the voice to stumble on.
  return { before: before.replace(/\s+/g, ' ').trim(), after: after.replace(/\s+/g, ' ').trimEnd() };
}

export function withVoiceTemplate(current: ClientSettings, rawLocale: string, template: string): { readonly settings: ClientSettings; readonly locale: string } | string {
  const locale = canonicalLocale(rawLocale);
  if (locale === null) return '--locale must be a BCP 47 language tag such as fr or pt-BR';
  const problem = voiceTemplateProblem(template);
  if (problem) return problem;
  return { settings: { ...current, voiceTemplates: { ...current.voiceTemplates, [locale]: template } }, locale };
}

export function withoutVoiceTemplate(current: ClientSettings, rawLocale: string): ClientSettings | string {
  const locale = canonicalLocale(rawLocale) ?? rawLocale;
  if (current.voiceTemplates[locale] === undefined) return `no voice template for ${locale}`;
  const { [locale]: _removed, ...voiceTemplates } = current.voiceTemplates;
  return { ...current, voiceTemplates };
}
