import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decidePhoneLimit, phoneLookBackSeconds, type PhoneLimitPolicy } from '../../src/domain/limits.js';

const policy: PhoneLimitPolicy = { count: 3, windowSeconds: 600, cooldownSeconds: 30 };
const now = new Date('2026-11-21T09:30:00.000Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);

describe('per-number limits (contract 6)', () => {
  it('allows a first verification', () => {
    assert.deepEqual(decidePhoneLimit({ countInWindow: 0, oldestInWindow: null, latest: null }, now, policy), { allowed: true });
  });

  it('refuses within the cooldown, saying how long to wait (rounded up)', () => {
    assert.deepEqual(decidePhoneLimit({ countInWindow: 1, oldestInWindow: ago(10), latest: ago(10) }, now, policy), {
      allowed: false,
      retryAfterSeconds: 20,
    });
    assert.deepEqual(decidePhoneLimit({ countInWindow: 1, oldestInWindow: ago(29.5), latest: ago(29.5) }, now, policy), {
      allowed: false,
      retryAfterSeconds: 1,
    });
    assert.deepEqual(decidePhoneLimit({ countInWindow: 1, oldestInWindow: ago(30), latest: ago(30) }, now, policy), { allowed: true });
  });

  it('refuses once the window holds PHONE_LIMIT_COUNT, until the oldest leaves it', () => {
    assert.deepEqual(decidePhoneLimit({ countInWindow: 3, oldestInWindow: ago(100), latest: ago(40) }, now, policy), {
      allowed: false,
      retryAfterSeconds: 500,
    });
    assert.deepEqual(decidePhoneLimit({ countInWindow: 2, oldestInWindow: ago(100), latest: ago(40) }, now, policy), { allowed: true });
  });

  it('answers the longer of the two waits', () => {
    const d = decidePhoneLimit({ countInWindow: 3, oldestInWindow: ago(595), latest: ago(1) }, now, policy);
    assert.deepEqual(d, { allowed: false, retryAfterSeconds: 29 });
  });

  it('with no cooldown, only the count limits', () => {
    const noCooldown = { ...policy, cooldownSeconds: 0 };
    assert.deepEqual(decidePhoneLimit({ countInWindow: 2, oldestInWindow: ago(0), latest: ago(0) }, now, noCooldown), { allowed: true });
    assert.equal(decidePhoneLimit({ countInWindow: 3, oldestInWindow: ago(0), latest: ago(0) }, now, noCooldown).allowed, false);
  });

  it('looks back as far as the longer of window and cooldown', () => {
    assert.equal(phoneLookBackSeconds(policy), 600);
    assert.equal(phoneLookBackSeconds({ count: 1, windowSeconds: 10, cooldownSeconds: 60 }), 60);
  });
});
