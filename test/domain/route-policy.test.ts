import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { bestShares, score, type ProviderFigures } from '../../src/domain/route-policy.js';
import { RouteTable, type Route } from '../../src/domain/routes.js';

const figures = (table: Record<string, ProviderFigures>) => (p: string) => table[p];
const closed = () => false;
const brief = (shares: ReturnType<typeof bestShares>) => shares.map((s) => `${s.provider} ${s.perMille} ${s.why}`);

describe('--policy best (contract 17)', () => {
  it('gives the provider with the best delivered and verified shares all but 5 % for each other, which stays measured', () => {
    const shares = bestShares(['a', 'b', 'c'], figures({ a: { sends: 100, delivered: 60, verified: 40 }, b: { sends: 100, delivered: 95, verified: 80 }, c: { sends: 10, delivered: 9, verified: 7 } }), closed);
    assert.deepEqual(brief(shares), ['a 50 floor', 'b 900 best', 'c 50 floor']);
    assert.equal(shares[1]?.sends, 100);
  });

  it('smooths a handful of sends towards a half, so that luck alone makes no provider best', () => {
    assert.equal(score({ sends: 0, delivered: 0, verified: 0 }), 0.5);
    // Two sends, both delivered and verified, against a hundred at 90 %: the hundred are the better evidence.
    assert.ok(score({ sends: 2, delivered: 2, verified: 2 }) < score({ sends: 100, delivered: 95, verified: 90 }));
    assert.deepEqual(brief(bestShares(['new', 'proven'], figures({ new: { sends: 2, delivered: 2, verified: 2 }, proven: { sends: 100, delivered: 95, verified: 90 } }), closed)), ['new 50 floor', 'proven 950 best']);
  });

  it('gives a provider whose circuit is open nothing, its floor to the best; ties go to the route order; all open keeps the order', () => {
    const even = figures({});
    assert.deepEqual(brief(bestShares(['a', 'b'], even, closed)), ['a 950 best', 'b 50 floor']);
    assert.deepEqual(brief(bestShares(['a', 'b', 'c'], even, (p) => p === 'a')), ['a 0 circuit open', 'b 950 best', 'c 50 floor']);
    assert.deepEqual(brief(bestShares(['a', 'b'], even, () => true)), ['a 950 best', 'b 50 floor']);
  });

  it("draws each verification's first provider by the shares, the others after it in the route's order", () => {
    const route: Route = { channel: 'sms', destination: 'NG', providers: ['a', 'b', 'c'], weights: null, failoverAfterSeconds: null, policy: 'best', updatedAt: new Date(0) };
    const table = new RouteTable([route]);
    assert.deepEqual(table.best, [route]);
    const firsts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) {
      const order = table.providersFor('sms', { id: randomUUID(), phoneNumber: '+2348031234567', regionCode: 'NG' }, ['x'], () => [50, 900, 50]);
      assert.equal(order.length, 3);
      firsts.set(order[0] ?? '', (firsts.get(order[0] ?? '') ?? 0) + 1);
    }
    // 900 of 1000 expected: 1,800 of 2,000, whose standard deviation is 13.
    assert.ok(Math.abs((firsts.get('b') ?? 0) - 1800) < 80, JSON.stringify([...firsts]));
    assert.ok((firsts.get('a') ?? 0) > 50 && (firsts.get('c') ?? 0) > 50, JSON.stringify([...firsts]));
    // With no shares known (or all zero), the route's order stands.
    assert.deepEqual(table.providersFor('sms', { id: randomUUID(), phoneNumber: '+2348031234567', regionCode: 'NG' }, ['x'], () => [0, 0, 0]), ['a', 'b', 'c']);
  });
});
