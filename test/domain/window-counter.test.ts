import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WindowCounter, type CounterStore } from '../../src/domain/window-counter.js';

/** The shared store, in memory: totals per (key, window). */
class MemoryCounterStore implements CounterStore {
  readonly totals = new Map<string, number>();
  calls = 0;
  async add(entries: readonly { key: string; windowStart: number; delta: number }[]): Promise<number[]> {
    this.calls += 1;
    return entries.map((e) => {
      const k = `${e.key}@${e.windowStart}`;
      const total = (this.totals.get(k) ?? 0) + e.delta;
      this.totals.set(k, total);
      return total;
    });
  }
}

describe('window counter (contract 6: per-client rate, failed authentications)', () => {
  it('counts hits per key in the current window, without waiting for the store', () => {
    let t = 10_500;
    const c = new WindowCounter(new MemoryCounterStore(), 1000, () => t);
    c.hit('a');
    c.hit('a');
    c.hit('b');
    assert.equal(c.count('a'), 2);
    assert.equal(c.count('b'), 1);
    assert.equal(c.msToNextWindow(), 500);
    t = 11_000;
    assert.equal(c.count('a'), 0, 'a new window starts at zero');
    assert.equal(c.msToNextWindow(), 1000);
  });

  it('keeps a key of any length within 256 bytes in the store, still counted on its own', async () => {
    const store = new MemoryCounterStore();
    const c = new WindowCounter(store, 60_000, () => 1_000);
    const long = `signin|${'é'.repeat(1500)}@example.com`;
    c.hit(long);
    c.hit(long);
    c.hit(`${long}x`);
    c.hit('short');
    await c.flush();
    assert.equal(c.count(long), 2);
    assert.equal(c.count(`${long}x`), 1);
    const keys = [...store.totals.keys()].map((k) => k.slice(0, k.lastIndexOf('@')));
    assert.ok(keys.every((k) => Buffer.byteLength(k) <= 256), keys.join(', '));
    assert.ok(keys.includes('short'), 'a short key is kept as given');
  });

  it('learns the total across instances when it flushes', async () => {
    const t = 5_000;
    const store = new MemoryCounterStore();
    const one = new WindowCounter(store, 1000, () => t);
    const two = new WindowCounter(store, 1000, () => t);
    one.hit('k');
    one.hit('k');
    two.hit('k');
    await one.flush();
    await two.flush();
    assert.equal(two.count('k'), 3);
    assert.equal(one.count('k'), 2, 'one has not heard of two yet');
    one.hit('k');
    await one.flush();
    assert.equal(one.count('k'), 4);
  });

  it('sends nothing when nothing is pending, and drops past windows', async () => {
    let t = 0;
    const store = new MemoryCounterStore();
    const c = new WindowCounter(store, 1000, () => t);
    await c.flush();
    assert.equal(store.calls, 0);
    c.hit('k');
    t = 2000;
    await c.flush();
    assert.equal(store.calls, 0, 'a hit of a past window is not sent');
  });

  it('shares one flush among concurrent callers', async () => {
    const store = new MemoryCounterStore();
    const c = new WindowCounter(store, 1000, () => 0);
    c.hit('k');
    await Promise.all([c.flush(), c.flush(), c.flush()]);
    assert.equal(store.calls, 1);
    assert.equal(store.totals.get('k@0'), 1);
  });
});
