/**
 * G.711 (ITU-T G.711) encoding of 16-bit linear PCM, the two codecs every SIP trunk speaks: mu-law (PCMU, RTP
 * payload type 0) and A-law (PCMA, payload type 8). One byte per sample at 8 kHz.
 */

export type G711Codec = 'PCMU' | 'PCMA';

/** The RTP payload type of each codec (RFC 3551 table 4). */
export const payloadTypes: Readonly<Record<G711Codec, number>> = { PCMU: 0, PCMA: 8 };

/** The byte a silent sample encodes to, to pad the last packet. */
export const silence: Readonly<Record<G711Codec, number>> = { PCMU: 0xff, PCMA: 0xd5 };

const muLawBias = 0x84;
/** The top of each mu-law segment, in 14-bit magnitude plus bias. */
const muLawSegmentEnds = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];

/** One sample, mu-law (G.711 as Sun's reference g711.c computes it: 14 bits, bias 33, eight segments). */
export function muLaw(sample: number): number {
  let pcm = Math.max(-32768, Math.min(32767, Math.round(sample))) >> 2;
  let mask = 0xff;
  if (pcm < 0) {
    pcm = -pcm;
    mask = 0x7f;
  }
  pcm = Math.min(pcm, 8159) + (muLawBias >> 2);
  const segment = muLawSegmentEnds.findIndex((end) => pcm <= end);
  if (segment < 0) return 0x7f ^ mask;
  return ((segment << 4) | ((pcm >> (segment + 1)) & 0x0f)) ^ mask;
}

/** One sample, A-law (G.711's 13-bit segments, even bits inverted with 0x55). */
export function aLaw(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, Math.round(sample))) >> 3;
  const sign = s >= 0 ? 0x80 : 0;
  if (s < 0) s = -s - 1;
  let segment = 0;
  for (let limit = 0x1f; s > limit && segment < 8; limit = (limit << 1) | 1) segment++;
  if (segment >= 8) return (0x7f ^ sign ^ 0x55) & 0xff;
  const mantissa = segment < 2 ? (s >> 1) & 0x0f : (s >> segment) & 0x0f;
  return ((sign | (segment << 4) | mantissa) ^ 0x55) & 0xff;
}

/** 8 kHz linear PCM -> G.711 bytes. */
export function encodeG711(samples: Int16Array, codec: G711Codec): Buffer {
  const encode = codec === 'PCMU' ? muLaw : aLaw;
  const out = Buffer.alloc(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = encode(samples[i] ?? 0);
  return out;
}

/** G.711 bytes -> linear samples (for tests and for checking what a peer received). */
export function decodeG711(bytes: Buffer, codec: G711Codec): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = codec === 'PCMU' ? muLawDecode(bytes[i] ?? 0xff) : aLawDecode(bytes[i] ?? 0xd5);
  return out;
}

function muLawDecode(byte: number): number {
  const u = ~byte & 0xff;
  const t = (((u & 0x0f) << 3) + muLawBias) << ((u & 0x70) >> 4);
  return u & 0x80 ? muLawBias - t : t - muLawBias;
}

function aLawDecode(byte: number): number {
  const a = byte ^ 0x55;
  let t = (a & 0x0f) << 4;
  const segment = (a & 0x70) >> 4;
  if (segment === 0) t += 8;
  else if (segment === 1) t += 0x108;
  else t = (t + 0x108) << (segment - 1);
  return a & 0x80 ? t : -t;
}
