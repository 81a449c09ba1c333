import type { PhoneNumber } from '../domain/phone.js';
import { parseE164, readE164 } from '../domain/phone.js';
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

/**
 * A caller id whose last digits are `code` (a test number's fixed code, which may be longer than a dropped call's
 * 4 digits): one of the ranges' numbers that ends in it when there are any, each equally likely; else a number of
 * the ranges with its last digits replaced by the code. No call is placed to a test number (contract 9): the number
 * only has to be what the record shows, and the code must be its last digits, as on every dropped call.
 */
export function callerIdEndingIn(ranges: readonly CallerIdRange[], code: string, random: Random): PhoneNumber {
  const modulus = 10 ** code.length;
  const wanted = Number(code);
  const matches = ranges.map((r) => {
    const first = Number(r.first.slice(1));
    const start = first + ((((wanted - first) % modulus) + modulus) % modulus);
    const last = first + r.size - 1;
    return { start, count: start <= last ? Math.floor((last - start) / modulus) + 1 : 0 };
  });
  const total = matches.reduce((n, m) => n + m.count, 0);
  for (let tries = 0; total > 0 && tries < 100; tries++) {
    let index = random.int(total);
    for (const m of matches) {
      if (index < m.count) {
        const parsed = parseE164(`+${m.start + index * modulus}`);
        if (parsed) return parsed;
        break;
      }
      index -= m.count;
    }
  }
  const base = pickCallerId(ranges, random);
  const national = base.e164.slice(base.countryCode.length);
  return readE164(`${base.countryCode}${national.slice(0, Math.max(0, national.length - code.length))}${code}`);
}
