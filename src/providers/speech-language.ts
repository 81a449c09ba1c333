/**
 * The language a hosted text-to-speech voice (Twilio `<Say>`, Vonage `talk`) reads the code in: both take a
 * language and region (`fr-FR`), and both speak these, for the languages the sentence is written in
 * (src/domain/spoken-code.ts). A locale with a region they lack speaks its language's first region.
 */
const regions: Readonly<Record<string, readonly string[]>> = {
  en: ['en-US', 'en-GB', 'en-AU', 'en-CA', 'en-IN'],
  fr: ['fr-FR', 'fr-CA'],
  es: ['es-ES', 'es-MX', 'es-US'],
  pt: ['pt-BR', 'pt-PT'],
  de: ['de-DE'],
  it: ['it-IT'],
  nl: ['nl-NL'],
};

/** `fr-CA` -> `fr-CA`, `fr` -> `fr-FR`, `de-AT` -> `de-DE`; a language not listed -> `en-US`. */
export function speechLanguage(language: string): string {
  const [base = 'en', region] = language.split('-');
  const choices = regions[base.toLowerCase()] ?? regions.en ?? ['en-US'];
  const exact = region === undefined ? undefined : choices.find((c) => c.toLowerCase() === `${base}-${region}`.toLowerCase());
  return exact ?? choices[0] ?? 'en-US';
}
