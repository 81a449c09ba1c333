/**
 * An SMS text as SMPP short_message octets: GSM 03.38 (data_coding 0, one septet per octet, the SMSC packs
 * them) when every character is in the default alphabet or its extension table, UCS-2 (data_coding 8)
 * otherwise. A text too long for one message is cut into concatenated parts, each led by a user data header.
 */

/** The GSM 03.38 default alphabet, in septet order (0x1B is the escape to the extension table, never a character). */
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** The extension table: each character is sent as 0x1B and this septet. */
const GSM_EXTENSION: Readonly<Record<string, number>> = {
  '\f': 0x0a, '^': 0x14, '{': 0x28, '}': 0x29, '\\': 0x2f, '[': 0x3c, '~': 0x3d, ']': 0x3e, '|': 0x40, '€': 0x65,
};
const ESCAPE = 0x1b;
const basicIndex = new Map<string, number>([...GSM_BASIC].map((c, i) => [c, i]));
basicIndex.delete('\x1b');

export const DATA_CODING_GSM = 0x00;
export const DATA_CODING_UCS2 = 0x08;
/** esm_class bit saying short_message starts with a user data header. */
export const ESM_CLASS_UDHI = 0x40;

/** One submit_sm's worth of text. */
export interface TextPart {
  readonly shortMessage: Buffer;
  /** True when shortMessage starts with a concatenation header (esm_class gets ESM_CLASS_UDHI). */
  readonly udh: boolean;
}

export interface EncodedText {
  readonly dataCoding: typeof DATA_CODING_GSM | typeof DATA_CODING_UCS2;
  readonly parts: readonly TextPart[];
}

/** The septets of one character (two for the extension table), or null when it is not in GSM 03.38. */
function gsmSeptets(char: string): number[] | null {
  const basic = basicIndex.get(char);
  if (basic !== undefined) return [basic];
  const ext = GSM_EXTENSION[char];
  return ext === undefined ? null : [ESCAPE, ext];
}

/** Each character's octets, in order: a unit that must not be split across parts. */
function units(text: string): { dataCoding: EncodedText['dataCoding']; units: Buffer[] } {
  const chars = [...text]; // by code point, so a surrogate pair stays one unit
  const gsm = chars.map(gsmSeptets);
  if (gsm.every((s): s is number[] => s !== null)) {
    return { dataCoding: DATA_CODING_GSM, units: gsm.map((s) => Buffer.from(s)) };
  }
  return { dataCoding: DATA_CODING_UCS2, units: chars.map((c) => Buffer.from(c, 'utf16le').swap16()) };
}

/** Octets in one message alone, and in one part after a 6-octet header (153 septets, 67 UCS-2 characters). */
const LIMITS = {
  [DATA_CODING_GSM]: { single: 160, part: 153 },
  [DATA_CODING_UCS2]: { single: 140, part: 134 },
} as const;
/** The 8-bit reference of a concatenated message numbers at most 255 parts. */
export const MAX_PARTS = 255;

/**
 * Encodes `text` and cuts it into parts. `reference` (0..255) ties the parts of one message together; the
 * caller changes it for every multipart message. Returns null when the text would need more than MAX_PARTS.
 */
export function encodeText(text: string, reference: number): EncodedText | null {
  const single = singleGsm(text);
  if (single) return { dataCoding: DATA_CODING_GSM, parts: [{ shortMessage: single, udh: false }] };
  const { dataCoding, units: all } = units(text);
  const limit = LIMITS[dataCoding];
  const total = all.reduce((n, u) => n + u.length, 0);
  if (total <= limit.single) return { dataCoding, parts: [{ shortMessage: Buffer.concat(all), udh: false }] };
  const chunks: Buffer[][] = [[]];
  let used = 0;
  for (const unit of all) {
    if (used + unit.length > limit.part) {
      chunks.push([]);
      used = 0;
    }
    chunks[chunks.length - 1]?.push(unit);
    used += unit.length;
  }
  if (chunks.length > MAX_PARTS) return null;
  const parts = chunks.map((chunk, i) => {
    // IEI 0x00 (concatenated message, 8-bit reference), length 3: reference, total parts, this part (from 1).
    const header = Buffer.from([0x05, 0x00, 0x03, reference & 0xff, chunks.length, i + 1]);
    return { shortMessage: Buffer.concat([header, ...chunk]), udh: true };
  });
  return { dataCoding, parts };
}

/**
 * A text that fits one GSM message (every code, in every language the default alphabet covers), in one pass
 * and one buffer: the common case, on the send path of every SMS. Null when it needs UCS-2 or more parts.
 */
function singleGsm(text: string): Buffer | null {
  const limit = LIMITS[DATA_CODING_GSM].single;
  if (text.length > limit) return null;
  const out = Buffer.allocUnsafe(limit);
  let n = 0;
  for (const c of text) {
    const basic = basicIndex.get(c);
    if (basic !== undefined) {
      out[n++] = basic;
      continue;
    }
    const ext = GSM_EXTENSION[c];
    if (ext === undefined || n + 2 > limit) return null;
    out[n++] = ESCAPE;
    out[n++] = ext;
  }
  return Buffer.from(out.subarray(0, n));
}

/** Text back to GSM 03.38 octets, characters outside it as '?': undoes the smpp package's decoding of data_coding 0. */
export function encodeGsmLoosely(text: string): Buffer {
  return Buffer.from([...text].flatMap((c) => gsmSeptets(c) ?? [0x3f]));
}
