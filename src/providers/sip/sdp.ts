import { isIP } from 'node:net';
import { payloadTypes, type G711Codec } from './g711.js';

/** Where and how the answerer wants our audio: from its SDP answer (RFC 3264). */
export interface MediaAnswer {
  readonly address: string;
  readonly port: number;
  readonly codec: G711Codec;
  readonly payloadType: number;
}

interface MediaLine {
  readonly port: number;
  readonly formats: readonly number[];
  address: string | null;
}

/**
 * Reads an SDP answer: the audio stream's connection address (media level, else session level), its port, and
 * the first of its formats that is PCMU (0) or PCMA (8). Null when there is no usable audio stream (port 0 is a
 * refused stream; a hold address 0.0.0.0 receives nothing).
 */
export function parseMediaAnswer(sdp: string): MediaAnswer | null {
  const lines = sdp.split(/\r?\n/).map((l) => l.trim());
  let sessionAddress: string | null = null;
  let media: MediaLine | null = null;
  let audio: MediaLine | null = null;
  for (const line of lines) {
    const connection = /^c=IN IP[46] ([^\s/]+)/.exec(line);
    if (connection?.[1]) {
      if (media) media.address = connection[1];
      else sessionAddress = connection[1];
      continue;
    }
    const m = /^m=(\w+) (\d+)(?:\/\d+)? RTP\/AVP ((?:\d+ ?)+)$/.exec(line);
    if (m) {
      media = { port: Number(m[2]), formats: (m[3] ?? '').trim().split(/\s+/).map(Number), address: null };
      if (m[1] === 'audio' && audio === null) audio = media;
    } else if (line.startsWith('m=')) media = { port: 0, formats: [], address: null };
  }
  if (!audio || audio.port === 0 || audio.port > 65535) return null;
  const address = audio.address ?? sessionAddress;
  if (address === null || !isIP(address) || address === '0.0.0.0') return null;
  const payloadType = audio.formats.find((f) => f === payloadTypes.PCMU || f === payloadTypes.PCMA);
  if (payloadType === undefined) return null;
  return { address, port: audio.port, codec: payloadType === payloadTypes.PCMU ? 'PCMU' : 'PCMA', payloadType };
}
