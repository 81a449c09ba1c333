import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { untilNextUtcDay, utcDay } from '../../src/domain/daily-quota.js';

describe('daily send quota (contract 6, CLIENT_DAILY_SEND_LIMIT)', () => {
  it('names the UTC day of an instant, whatever the local zone', () => {
    assert.equal(utcDay(new Date('2026-11-21T23:59:59.999Z')), '2026-11-21');
    assert.equal(utcDay(new Date('2026-11-22T00:00:00.000Z')), '2026-11-22');
  });

  it('makes a refused send wait until the next UTC midnight, at least one second', () => {
    assert.equal(untilNextUtcDay(new Date('2026-11-21T09:30:00.000Z')), 14.5 * 3600);
    assert.equal(untilNextUtcDay(new Date('2026-12-31T23:59:59.500Z')), 1);
  });
});
