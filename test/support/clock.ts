import type { Clock } from '../../src/domain/ports.js';

/** A clock tests move by hand. */
export class TestClock implements Clock {
  private t: number;
  constructor(start = Date.parse('2026-11-21T09:30:00.000Z')) {
    this.t = start;
  }
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/**
 * A clock that follows real time (for a server that a browser or a real receiver talks to, whose cookies and
 * signatures carry real times) and that a test can hold still while a fixed window must not end under it: four
 * sign-ins that a one-minute failure window must count together, however slowly a busy machine runs them.
 */
export class RealClock implements Clock {
  private heldAt: number | null = null;
  now(): Date {
    return new Date(this.heldAt ?? Date.now());
  }
  /** Runs `work` with the clock stopped at the time it starts, then lets it follow real time again. */
  async held<T>(work: () => Promise<T>): Promise<T> {
    this.heldAt = Date.now();
    try {
      return await work();
    } finally {
      this.heldAt = null;
    }
  }
}
