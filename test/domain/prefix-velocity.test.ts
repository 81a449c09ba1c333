import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decidePrefix, prefixOf, type PrefixPolicy } from '../../src/domain/prefix-velocity.js';

const policy: PrefixPolicy = { count: 3, windowSeconds: 3600, blockSeconds: 600 };
const now = new Date('2026-11-21T09:30:00.000Z');

describe('prefix velocity (contract 10)', () => {
  it('takes the E.164 number less its last 3 digits', () => {
    assert.equal(prefixOf('+2348031234567'), '+2348031234');
  });

  it('allows creates below the count, blocks the one that reaches it for PREFIX_BLOCK_SECONDS', () => {
    assert.deepEqual(decidePrefix({ recentCreates: 2, blockedUntil: null }, now, policy), { kind: 'allowed' });
    assert.deepEqual(decidePrefix({ recentCreates: 3, blockedUntil: null }, now, policy), {
      kind: 'blocked',
      until: new Date('2026-11-21T09:40:00.000Z'),
      newBlock: true,
    });
  });

  it('refuses while a block is in force, whatever the count, and forgets a block that has ended', () => {
    const until = new Date('2026-11-21T09:31:00.000Z');
    assert.deepEqual(decidePrefix({ recentCreates: 0, blockedUntil: until }, now, policy), { kind: 'blocked', until, newBlock: false });
    assert.deepEqual(decidePrefix({ recentCreates: 0, blockedUntil: now }, now, policy), { kind: 'allowed' });
  });

  it('never refuses when PREFIX_LIMIT_COUNT is 0', () => {
    assert.deepEqual(decidePrefix({ recentCreates: 1_000_000, blockedUntil: null }, now, { ...policy, count: 0 }), { kind: 'allowed' });
  });
});
