/**
 * The GSM 03.38 default alphabet (3GPP TS 23.038 6.2.1) and its extension table (6.2.1.1, reached through
 * escape): text made only of these goes out as 7-bit GSM; anything else needs UCS-2 ("unicode") and halves
 * what one SMS part can carry.
 */
const basic =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const extension = '\f^{}\\[~]|€';
const alphabet: ReadonlySet<string> = new Set([...basic, ...extension]);

/** True when every character of `text` is in the GSM 7-bit alphabet or its extension table. */
export function isGsm7(text: string): boolean {
  for (const char of text) if (!alphabet.has(char)) return false;
  return true;
}

/** Characters that take two septets in GSM 7-bit (an escape, then the character). */
const extended: ReadonlySet<string> = new Set([...extension]);

/** How many SMS parts `text` takes: 160 septets in one GSM part (153 each when split), 70 UCS-2 units (67 when split). */
export function smsParts(text: string): { readonly encoding: 'GSM-7' | 'UCS-2'; readonly units: number; readonly parts: number } {
  if (isGsm7(text)) {
    let septets = 0;
    for (const char of text) septets += extended.has(char) ? 2 : 1;
    return { encoding: 'GSM-7', units: septets, parts: septets <= 160 ? 1 : Math.ceil(septets / 153) };
  }
  // UCS-2 counts UTF-16 code units: a character outside the basic plane takes two.
  const units = text.length;
  return { encoding: 'UCS-2', units, parts: units <= 70 ? 1 : Math.ceil(units / 67) };
}
