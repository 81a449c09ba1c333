/** The current time. Injected so tests can move it. */
export interface Clock {
  now(): Date;
}

/** Randomness. Injected so tests can make it predictable. */
export interface Random {
  /** A uniformly random integer in [0, max). */
  int(max: number): number;
  /** Random bytes from a cryptographic source. */
  bytes(length: number): Buffer;
  /** A new random UUID (lower-case, hyphenated). */
  uuid(): string;
}

export const systemClock: Clock = { now: () => new Date() };
