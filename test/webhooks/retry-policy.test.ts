import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decideRetry, retryAfterMs, type AttemptResult } from '../../src/webhooks/retry-policy.js';

const delays = [5, 300, 1800, 7200, 18000, 36000, 36000];
const now = new Date('2026-11-21T09:30:00.000Z');
const status = (s: number, retryAfter: string | null = null): AttemptResult => ({ kind: 'response', status: s, retryAfter });
const failure: AttemptResult = { kind: 'error' };

describe('webhook retry policy', () => {
  it('counts any 2xx as delivered, whatever the attempt', () => {
    for (const s of [200, 201, 202, 204, 299]) {
      assert.deepEqual(decideRetry({ attempt: 1, result: status(s), delays, random: 0.5, now }), { kind: 'delivered' });
      assert.deepEqual(decideRetry({ attempt: 99, result: status(s), delays, random: 0.5, now }), { kind: 'delivered' });
    }
  });

  it('follows the schedule, then gives up after the last delay', () => {
    delays.forEach((seconds, i) => {
      const d = decideRetry({ attempt: i + 1, result: status(500), delays, random: 0.5, now });
      assert.deepEqual(d, { kind: 'retry', delayMs: seconds * 1000, basis: 'schedule' });
    });
    assert.deepEqual(decideRetry({ attempt: delays.length + 1, result: failure, delays, random: 0.5, now }), {
      kind: 'give-up',
    });
  });

  it('retries errors, redirects and 4xx alike', () => {
    for (const result of [failure, status(302), status(400), status(404), status(410)]) {
      assert.equal(decideRetry({ attempt: 1, result, delays, random: 0.5, now }).kind, 'retry');
    }
  });

  it('keeps the jitter within ±20%', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: delays.length }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, random) => {
        const d = decideRetry({ attempt, result: failure, delays, random, now });
        const base = (delays[attempt - 1] ?? 0) * 1000;
        return d.kind === 'retry' && d.delayMs >= Math.floor(base * 0.8) && d.delayMs <= Math.ceil(base * 1.2);
      }),
    );
    assert.equal(decideRetry({ attempt: 2, result: failure, delays, random: 0, now }).kind === 'retry', true);
    const low = decideRetry({ attempt: 2, result: failure, delays, random: 0, now });
    assert.deepEqual(low, { kind: 'retry', delayMs: 240_000, basis: 'schedule' });
  });

  it('honours Retry-After on 429 and 503 up to twice the scheduled delay', () => {
    const at = (s: number, ra: string, attempt = 1) => decideRetry({ attempt, result: status(s, ra), delays, random: 0.5, now });
    assert.deepEqual(at(429, '8'), { kind: 'retry', delayMs: 8000, basis: 'retry-after' });
    assert.deepEqual(at(503, '8'), { kind: 'retry', delayMs: 8000, basis: 'retry-after' });
    assert.deepEqual(at(429, '3600'), { kind: 'retry', delayMs: 10_000, basis: 'retry-after' });
    // Asking for less than the schedule: the schedule already honours it.
    assert.deepEqual(at(429, '1'), { kind: 'retry', delayMs: 5000, basis: 'schedule' });
    // HTTP date form.
    const date = new Date(now.getTime() + 9000).toUTCString();
    assert.deepEqual(at(503, date), { kind: 'retry', delayMs: 9000, basis: 'retry-after' });
    // Other statuses and unreadable values keep the schedule.
    assert.deepEqual(at(500, '8'), { kind: 'retry', delayMs: 5000, basis: 'schedule' });
    assert.deepEqual(at(429, 'soon'), { kind: 'retry', delayMs: 5000, basis: 'schedule' });
    // Retry-After never extends the schedule: after the last delay it is over.
    assert.deepEqual(at(429, '8', delays.length + 1), { kind: 'give-up' });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs(new Date(now.getTime() - 5000).toUTCString(), now), 0);
    assert.equal(retryAfterMs('-1', now), null);
    assert.equal(retryAfterMs('1.5', now), null);
    assert.equal(retryAfterMs('tomorrow', now), null);
  });
});
