import { randomBytes, randomInt } from 'node:crypto';
import type { Random } from './ports.js';

/**
 * A version 7 UUID (RFC 9562): the Unix time in milliseconds, then 74 random bits. Ids made one after another
 * sort one after another, so a new row's primary-key entry lands on the index's last page rather than on a
 * random one: fewer pages written (and fewer full-page images after each checkpoint) on every create.
 */
export function uuidV7(ms: number, random: Uint8Array): string {
  const b = Buffer.from(random.subarray(0, 16));
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | ((b[6] ?? 0) & 0x0f);
  b[8] = 0x80 | ((b[8] ?? 0) & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Randomness from the operating system's CSPRNG. */
export const cryptoRandom: Random = {
  int: (max) => randomInt(max),
  bytes: (length) => randomBytes(length),
  uuid: () => uuidV7(Date.now(), randomBytes(16)),
};
