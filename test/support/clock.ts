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
