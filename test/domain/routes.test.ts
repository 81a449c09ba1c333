import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failoverAfterProblem, parseDestination, RouteTable, weightsProblem, type Route } from '../../src/domain/routes.js';

const at = new Date('2026-12-01T00:00:00Z');
const route = (channel: Route['channel'], destination: string, providers: string[], weights: number[] | null = null, failoverAfterSeconds: number | null = null): Route => ({
  channel,
  destination,
  providers,
  weights,
  failoverAfterSeconds,
  policy: 'ordered',
  updatedAt: at,
});

describe('routes (contract 17)', () => {
  it('reads a destination as default, a known country or + and digits, and nothing else', () => {
    assert.equal(parseDestination('default'), 'default');
    assert.equal(parseDestination(' Default '), 'default');
    assert.equal(parseDestination('ng'), 'NG');
    assert.equal(parseDestination('GH'), 'GH');
    assert.equal(parseDestination('+234 (80) 3-'), '+234803');
    assert.equal(parseDestination('+1'), '+1');
    for (const bad of ['NGA', 'XX', 'ZZ', '234803', '+0123', '+1234567890123456', '', 'de fault', '+23a']) assert.equal(parseDestination(bad), null, bad);
  });

  it('takes the longest matching prefix, then the country, then the default route, then the channel list', () => {
    const table = new RouteTable([
      route('sms', '+234', ['b']),
      route('sms', '+23480', ['c', 'a']),
      route('sms', 'GH', ['d']),
      route('call', 'default', ['e']),
      route('whatsapp', 'NG', ['f']),
    ]);
    const configured = ['a', 'b'];
    const to = (phoneNumber: string, regionCode: string | null) => ({ id: 'a-verification', phoneNumber, regionCode });
    assert.deepEqual(table.providersFor('sms', to('+2348031234567', 'NG'), configured), ['c', 'a'], 'the longest prefix');
    assert.deepEqual(table.providersFor('sms', to('+2347031234567', 'NG'), configured), ['b'], 'a shorter prefix before the country');
    assert.deepEqual(table.providersFor('sms', to('+233241234567', 'GH'), configured), ['d'], 'the country');
    assert.deepEqual(table.providersFor('sms', to('+254712345678', 'KE'), configured), configured, 'no route: the channel list');
    assert.deepEqual(table.providersFor('sms', to('+254712345678', null), configured), configured, 'no country known: the channel list');
    assert.deepEqual(table.providersFor('call', to('+254712345678', 'KE'), ['x']), ['e'], "the channel's default route replaces its list");
    assert.deepEqual(table.providersFor('whatsapp', to('+2348031234567', 'NG'), ['w']), ['f'], 'routes are per channel');
    assert.deepEqual(table.providersFor('voice', to('+2348031234567', 'NG'), ['v']), ['v'], 'another channel keeps its list');
    assert.equal(table.routeFor('sms', to('+254712345678', 'KE')), null);
  });

  it("draws each verification's first provider by the weights, the same at every ask, the others following in order", () => {
    const table = new RouteTable([route('sms', 'NG', ['a', 'b', 'c'], [80, 20, 0])]);
    const firsts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) {
      // Ids as the service makes them (UUID v7): the same leading time bits for ids made in one millisecond.
      const id = `0193a7c2-5e10-7${String(i).padStart(3, '0').slice(-3)}-8${(i * 7919).toString(16).padStart(3, '0').slice(-3)}-${(i * 104729).toString(16).padStart(12, '0').slice(-12)}`;
      const order = table.providersFor('sms', { id, phoneNumber: '+2348031234567', regionCode: 'NG' }, ['x']);
      assert.deepEqual(table.providersFor('sms', { id, phoneNumber: '+2348031234567', regionCode: 'NG' }, ['x']), order, 'the same draw every time');
      assert.deepEqual([...order].sort(), ['a', 'b', 'c'], 'every provider once');
      assert.deepEqual(order.slice(1), ['a', 'b', 'c'].filter((p) => p !== order[0]), 'the others in the route order');
      firsts.set(order[0] ?? '', (firsts.get(order[0] ?? '') ?? 0) + 1);
    }
    const share = (p: string) => (firsts.get(p) ?? 0) / 2000;
    assert.ok(share('a') > 0.75 && share('a') < 0.85, `a first for ${share('a')}`);
    assert.ok(share('b') > 0.15 && share('b') < 0.25, `b first for ${share('b')}`);
    assert.equal(firsts.get('c'), undefined, 'a weight of 0 is never first');
  });

  it("gives each number its route's delivery-confirmed failover, and none without one", () => {
    const table = new RouteTable([route('sms', 'NG', ['smpp', 'twilio'], null, 20), route('sms', '+23480', ['twilio', 'smpp'])]);
    const to = (phoneNumber: string, regionCode: string | null) => ({ id: '0190c3a4-0000-7000-8000-000000000001', phoneNumber, regionCode });
    assert.equal(table.routeFor('sms', to('+2349012345678', 'NG'))?.failoverAfterSeconds ?? null, 20);
    assert.equal(table.routeFor('sms', to('+2348012345678', 'NG'))?.failoverAfterSeconds ?? null, null, 'the longer prefix route has none');
    assert.equal(table.routeFor('whatsapp', to('+2349012345678', 'NG'))?.failoverAfterSeconds ?? null, null);
    assert.equal(failoverAfterProblem(20, ['smpp']), '--failover-after needs a second provider in the route to send through');
    assert.equal(failoverAfterProblem(1.5, ['smpp', 'twilio']), '--failover-after is whole seconds from 1 to 3600');
    assert.equal(failoverAfterProblem(3600, ['smpp', 'twilio']), null);
  });

  it('refuses weights that do not fit the providers', () => {
    assert.equal(weightsProblem([80, 20], ['a', 'b']), null);
    assert.match(weightsProblem([80], ['a', 'b']) ?? '', /one weight a provider: 2 for a,b, not 1/);
    assert.match(weightsProblem([0, 0], ['a', 'b']) ?? '', /at least one weight above 0/);
    assert.match(weightsProblem([1.5, 2], ['a', 'b']) ?? '', /whole numbers from 0 to 1000/);
    assert.match(weightsProblem([-1, 2], ['a', 'b']) ?? '', /whole numbers/);
  });
});
