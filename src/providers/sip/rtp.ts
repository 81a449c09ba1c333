import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { isIP } from 'node:net';
import { encodeG711, payloadTypes, silence } from './g711.js';
import type { MediaAnswer } from './sdp.js';

/** 20 ms of 8 kHz audio: one packet's 160 samples (RFC 3551's default packetisation of G.711). */
export const samplesPerPacket = 160;
export const packetMs = 20;

/** The RTP socket of one call: bound before the INVITE, so that the SDP offer names its port. */
export interface RtpSocket {
  readonly port: number;
  /** Streams `pcm` (8 kHz) to the answer's address in the answer's codec; resolves when sent, or stopped. */
  play(answer: MediaAnswer, pcm: Int16Array, signal: AbortSignal, onFirstPacket?: () => void): Promise<void>;
  close(): void;
}

/** Binds a UDP socket for RTP on `address` (0.0.0.0 or ::: every address), on a port the system picks. */
export async function openRtpSocket(address: string): Promise<RtpSocket> {
  const socket = dgram.createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, address, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  // Nothing is read: what the far end sends is dropped, and an error (an ICMP unreachable) ends no call.
  socket.on('error', () => undefined);
  socket.on('message', () => undefined);
  let closed = false;
  return {
    port: socket.address().port,
    play: (answer, pcm, signal, onFirstPacket) => stream(socket, answer, pcm, signal, onFirstPacket),
    close() {
      if (closed) return;
      closed = true;
      socket.close();
    },
  };
}

/** One RTP packet (RFC 3550 section 5.1): version 2, no padding, extension or CSRC. */
export function rtpPacket(payloadType: number, marker: boolean, sequence: number, timestamp: number, ssrc: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header[0] = 0x80;
  header[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  header.writeUInt16BE(sequence & 0xffff, 2);
  header.writeUInt32BE(timestamp >>> 0, 4);
  header.writeUInt32BE(ssrc >>> 0, 8);
  return Buffer.concat([header, payload]);
}

/**
 * Sends the audio as packets of 160 samples every 20 ms, each due at start + n * 20 ms (so that timer lateness
 * never accumulates), sequence numbers and timestamps from random starts (RFC 3550), one SSRC, the marker bit on
 * the first packet (the start of a talkspurt), the last packet padded with silence.
 */
async function stream(socket: dgram.Socket, answer: MediaAnswer, pcm: Int16Array, signal: AbortSignal, onFirstPacket?: () => void): Promise<void> {
  const encoded = encodeG711(pcm, answer.codec);
  const packets = Math.ceil(encoded.length / samplesPerPacket);
  const sequence = randomInt(0, 0x10000);
  const timestamp = randomInt(0, 2 ** 31);
  const ssrc = randomInt(1, 2 ** 31);
  const payloadType = payloadTypes[answer.codec];
  const start = performance.now();
  for (let n = 0; n < packets && !signal.aborted; n++) {
    const due = start + n * packetMs;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    if (signal.aborted) break;
    const payload = Buffer.alloc(samplesPerPacket, silence[answer.codec]);
    encoded.copy(payload, 0, n * samplesPerPacket, Math.min(encoded.length, (n + 1) * samplesPerPacket));
    const packet = rtpPacket(payloadType, n === 0, sequence + n, timestamp + n * samplesPerPacket, ssrc, payload);
    socket.send(packet, answer.port, answer.address);
    if (n === 0) onFirstPacket?.();
  }
}
