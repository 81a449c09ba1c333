/**
 * What a voice call says (contract 13): a short sentence that reads the code digit by digit, numerals separated by
 * commas so that every text-to-speech engine says "four, one, two" and never "four hundred and twelve".
 */

/** "Your code is" in the languages the sentence is written in; any other locale is spoken in English. */
const introductions: Readonly<Record<string, string>> = {
  en: 'Your code is',
  fr: 'Votre code est',
  es: 'Su código es',
  pt: 'Seu código é',
  de: 'Ihr Code lautet',
  it: 'Il suo codice è',
  nl: 'Uw code is',
};

/** The digits one by one: "4, 1, 2, 9, 0, 7". */
export function spokenDigits(code: string): string {
  return [...code].join(', ');
}

/**
 * The language a call speaks for a verification's locale (BCP 47, e.g. `fr-CA`): that locale when its language has
 * a sentence here, else `en`.
 */
export function voiceLanguage(locale: string | null): string {
  if (locale === null) return 'en';
  const language = locale.split('-')[0]?.toLowerCase() ?? '';
  return introductions[language] !== undefined ? locale : 'en';
}

/** The introduction of `language` (a value voiceLanguage gave). */
export function voiceIntroduction(language: string): string {
  return introductions[language.split('-')[0]?.toLowerCase() ?? ''] ?? introductions.en ?? 'Your code is';
}

/** One reading of the code: "Your code is 4, 1, 2, 9, 0, 7." */
export function voiceSentence(language: string, code: string): string {
  return `${voiceIntroduction(language)} ${spokenDigits(code)}.`;
}
