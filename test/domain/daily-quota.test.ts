import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideDailyQuota, utcDay } from '../../src/domain/daily-quota.js';

describe('daily send quota (contract 6, CLIENT_DAILY_SEND_LIMIT)', () => {
  it('names the UTC day of an instant, whatever the local zone', () => {
    assert.equal(utcDay(new Date('2026-11-21T23:59:59.999Z')), '2026-11-21');
    assert.equal(utcDay(new Date('2026-11-22T00:00:00.000Z')), '2026-11-22');
  });

  it('allows sends below the limit and always when the limit is 0', () => {
    const now = new Date('2026-11-21T09:30:00.000Z');
    assert.deepEqual(decideDailyQuota(2, 3, now), { allowed: true });
    assert.deepEqual(decideDailyQuota(1_000_000, 0, now), { allowed: true });
  });

  it('refuses at the limit until the next UTC midnight, at least one second', () => {
    assert.deepEqual(decideDailyQuota(3, 3, new Date('2026-11-21T09:30:00.000Z')), { allowed: false, retryAfterSeconds: 14.5 * 3600 });
    assert.deepEqual(decideDailyQuota(4, 3, new Date('2026-12-31T23:59:59.500Z')), { allowed: false, retryAfterSeconds: 1 });
  });
});
