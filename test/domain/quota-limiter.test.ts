import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuotaLimiter, type QuotaStore } from '../../src/domain/quota-limiter.js';

/** One window's totals per key, as SqlCounterStore keeps them: a claim never passes the limit it names. */
class MemoryQuotaStore implements QuotaStore {
  readonly totals = new Map<string, number>();
  async claim(key: string, windowStart: number, want: number, limit: number): Promise<number> {
    const at = `${key}|${windowStart}`;
    const total = this.totals.get(at) ?? 0;
    const granted = Math.max(0, Math.min(want, limit - total));
    this.totals.set(at, total + granted);
    return granted;
  }
}

async function admitted(limiter: QuotaLimiter, key: string, tries: number, limit?: number): Promise<number> {
  let n = 0;
  for (let i = 0; i < tries; i += 1) if (await limiter.tryAcquire(key, limit)) n += 1;
  return n;
}

describe('QuotaLimiter', () => {
  it('admits at most the limit per window, across instances sharing a store', async () => {
    const store = new MemoryQuotaStore();
    let now = 0;
    const a = new QuotaLimiter(store, 3_600_000, () => now, 10, 5);
    const b = new QuotaLimiter(store, 3_600_000, () => now, 10, 5);
    assert.equal(await admitted(a, 'k', 7), 7);
    // The other holds what it claimed ahead (a share of 2 at most): never more than 10 in all.
    const total = 7 + (await admitted(b, 'k', 7));
    assert.ok(total <= 10 && total >= 8, `${total} admitted`);
    now = 3_600_000;
    assert.equal(await admitted(a, 'k', 3), 3);
  });

  it('takes a larger limit named by the caller within the window, after the smaller one was spent (ABROAD_LIMIT_SHARE)', async () => {
    const store = new MemoryQuotaStore();
    const limiter = new QuotaLimiter(store, 3_600_000, () => 1_000, 3);
    assert.equal(await admitted(limiter, 'k', 5), 3);
    // The country's verified codes grew: room for 5 in all, 3 of them taken.
    assert.equal(await admitted(limiter, 'k', 5, 5), 2);
    // A smaller room named later takes nothing back, and admits nothing more.
    assert.equal(await admitted(limiter, 'k', 2, 4), 0);
  });
});
