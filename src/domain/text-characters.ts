/**
 * Characters a client's texts (templates, app name) may not hold. Bidirectional controls reorder what a user reads
 * (an override can make "moc.knab" read "bank.com", or move the code into a sentence that says something else:
 * the "Trojan Source" trick, CVE-2021-42574); other control characters render as nothing or as garbage on a
 * handset, and C1 controls and the Unicode line separators split or end lines where the text shows none.
 * Line feeds stay allowed where a text may span lines (templates); joiners (U+200C, U+200D) stay allowed: scripts
 * such as Persian and Devanagari and emoji sequences need them.
 */
const names: Readonly<Record<number, string>> = {
  0x061c: 'arabic letter mark',
  0x200e: 'left-to-right mark',
  0x200f: 'right-to-left mark',
  0x2028: 'line separator',
  0x2029: 'paragraph separator',
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
};

const bidiOrSeparator = /[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const controlWithNewline = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u;
const control = /[\u0000-\u001f\u007f-\u009f]/u;

/**
 * The first character of `text` it may not hold, described for an error message ("U+202E (right-to-left
 * override)"), or null. `lineFeeds`: whether a line feed is allowed.
 */
export function forbiddenCharacter(text: string, options: { readonly lineFeeds: boolean }): string | null {
  const pattern = new RegExp(`${bidiOrSeparator.source}|${(options.lineFeeds ? controlWithNewline : control).source}`, 'u');
  const found = pattern.exec(text)?.[0];
  if (found === undefined) return null;
  const point = found.codePointAt(0) ?? 0;
  const hex = `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
  return `${hex} (${names[point] ?? 'a control character'})`;
}
