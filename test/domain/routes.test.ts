import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDestination, RouteTable, type Route } from '../../src/domain/routes.js';

const at = new Date('2026-12-01T00:00:00Z');
const route = (channel: Route['channel'], destination: string, providers: string[]): Route => ({ channel, destination, providers, updatedAt: at });

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
    const to = (phoneNumber: string, regionCode: string | null) => ({ phoneNumber, regionCode });
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
});
