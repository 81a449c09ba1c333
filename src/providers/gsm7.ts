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
