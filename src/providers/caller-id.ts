import type { PhoneNumber } from '../domain/phone.js';
import { parseE164 } from '../domain/phone.js';
import type { Random } from '../domain/ports.js';

/** A block of consecutive numbers dropped calls are placed from. */
export interface CallerIdRange {
  /** National prefix shared by the whole range, E.164 with its plus. */
  readonly first: string;
  /** How many numbers the range holds. */
  readonly size: number;
}

/**
 * Parses `+2349010000000-+2349010009999,+...` into ranges. Each end must be a valid number, both ends of a
 * range the same length, and the range at least 10,000 numbers long, so every 4-digit code can occur.
 */
export function parseCallerIdRanges(raw: string): CallerIdRange[] {
  const ranges = raw.split(',').map((part) => part.trim()).filter((p) => p.length > 0);
  if (ranges.length === 0) throw new Error('expected at least one range');
  return ranges.map((part) => {
    const m = /^(\+\d{6,15})-(\+\d{6,15})$/.exec(part);
    if (!m?.[1] || !m[2]) throw new Error(`"${part}" is not start-end, e.g. +2349010000000-+2349010009999`);
    const [start, end] = [m[1], m[2]];
    if (start.length !== end.length) throw new Error(`"${part}": both ends must have the same number of digits`);
    if (!parseE164(start) || !parseE164(end)) throw new Error(`"${part}": both ends must be valid phone numbers`);
    const size = Number(end.slice(1)) - Number(start.slice(1)) + 1;
    if (size < 10_000) throw new Error(`"${part}": a range must hold at least 10000 numbers (every 4-digit code)`);
    return { first: start, size };
  });
}

/** A uniformly random caller id from the ranges; every number in them is equally likely. */
export function pickCallerId(ranges: readonly CallerIdRange[], random: Random): PhoneNumber {
  const total = ranges.reduce((n, r) => n + r.size, 0);
  for (let tries = 0; tries < 100; tries++) {
    let index = random.int(total);
    for (const range of ranges) {
      if (index < range.size) {
        const digits = String(Number(range.first.slice(1)) + index);
        const parsed = parseE164(`+${digits}`);
        if (parsed) return parsed;
        break;
      }
      index -= range.size;
    }
  }
  throw new Error('CALLER_ID_RANGES hold no valid numbers');
}
