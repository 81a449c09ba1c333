import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { Random } from './ports.js';

/** Randomness from the operating system's CSPRNG. */
export const cryptoRandom: Random = {
  int: (max) => randomInt(max),
  bytes: (length) => randomBytes(length),
  uuid: () => randomUUID(),
};
