import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversionOf, decideThrottled, hasLocalRoom, shortWindowAt, Throttles, underConverting, underConvertingClients, type RouteTraffic } from '../../src/domain/conversion.js';
import { ConversionWatch, type ConversionStore } from '../../src/domain/conversion-watch.js';
import { TestClock } from '../support/clock.js';

const policy = { minConversion: 0.2, minSample: 200, windowSeconds: 3600, throttleSeconds: 86_400 };
const route = (regionCode: string, provider: string, sends: number, verified: number): RouteTraffic => ({
  regionCode,
  countryCode: '+234',
  network: '',
  provider,
  sends,
  delivered: sends,
  verified,
});

describe('conversion (contract 10)', () => {
  it('judges only routes with MIN_CONVERSION_SAMPLE sends, and throttles those strictly under MIN_CONVERSION', () => {
    const traffic = [route('NG', 'twilio', 199, 0), route('NG', 'smpp', 200, 39), route('GH', 'twilio', 200, 40), route('KE', 'twilio', 5000, 999)];
    assert.deepEqual(
      underConverting(traffic, policy).map((t) => `${t.regionCode}/${t.provider}`),
      ['NG/smpp', 'KE/twilio'],
    );
    assert.deepEqual(underConverting(traffic, { ...policy, minConversion: 0 }), [], 'MIN_CONVERSION=0 is off');
  });

  it('judges the short window on its own sample beside the hour, keeping the figures that tripped it; 0 turns it off', () => {
    const short = { ...policy, shortWindowSeconds: 300, shortMinSample: 50 };
    const diluted = { ...route('ZA', 'twilio', 3400, 2448), recent: { sends: 60, verified: 11 } };
    const tooFew = { ...route('KE', 'twilio', 3400, 2448), recent: { sends: 49, verified: 0 } };
    const fine = { ...route('GH', 'twilio', 3400, 2448), recent: { sends: 60, verified: 12 } };
    assert.deepEqual(
      underConverting([diluted, tooFew, fine], short).map((t) => `${t.regionCode} ${t.verified}/${t.sends}`),
      ['ZA 11/60'],
    );
    assert.deepEqual(underConverting([diluted], { ...short, shortWindowSeconds: 0 }), []);
    assert.deepEqual(underConvertingClients([{ clientId: 'c', sends: 100, verified: 80 }], short), [], 'a client is judged over the hour only');
  });

  it('leaves the last half minute out of the short window: its codes are still being typed', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    assert.deepEqual(shortWindowAt(now, { ...policy, shortWindowSeconds: 60 }), {
      since: new Date('2026-11-23T11:58:30Z'),
      until: new Date('2026-11-23T11:59:30Z'),
    });
    assert.equal(shortWindowAt(now, policy), null);
  });

  it('reads a route with nothing sent as converting', () => {
    assert.equal(conversionOf({ sends: 0, verified: 0 }), 1);
    assert.equal(conversionOf({ sends: 4, verified: 1 }), 0.25);
  });

  it('admits the prefix limit per window under a throttle, then asks to wait until the oldest leaves the window', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    const limit = { count: 10, windowSeconds: 3600 };
    assert.deepEqual(decideThrottled({ recentCreates: 9, oldest: now }, now, limit), { allowed: true });
    const oldest = new Date(now.getTime() - 3000 * 1000);
    assert.deepEqual(decideThrottled({ recentCreates: 10, oldest }, now, limit), { allowed: false, retryAfterSeconds: 600 });
  });

  it('keeps room for local users while their unverified codes stay under a tenth of the codes verified in the country', () => {
    const limit = { count: 10 };
    const oldest = new Date('2026-11-23T11:00:00Z');
    // 300 verified leave room for 30 unverified, not 31.
    assert.equal(hasLocalRoom({ recentCreates: 500, oldest, localRoom: { verified: 300, unverified: 29 } }, limit), true);
    assert.equal(hasLocalRoom({ recentCreates: 500, oldest, localRoom: { verified: 300, unverified: 30 } }, limit), false);
    // Fewer verified than ten times the limit: the limit itself is the room.
    assert.equal(hasLocalRoom({ recentCreates: 500, oldest, localRoom: { verified: 50, unverified: 9 } }, limit), true);
    assert.equal(hasLocalRoom({ recentCreates: 500, oldest, localRoom: { verified: 50, unverified: 10 } }, limit), false);
    // A state without the local room's figures (a client throttle's) has none.
    assert.equal(hasLocalRoom({ recentCreates: 0, oldest }, limit), false);
  });

  it('answers a throttle only on its own route and only while in force', () => {
    const at = new Date('2026-11-23T12:00:00Z');
    const until = new Date(at.getTime() + 60_000);
    const throttles = new Throttles([{ regionCode: 'NG', countryCode: '+234', network: 'MTN', provider: 'twilio', throttledAt: at, throttledUntil: until, sends: 300, verified: 3 }]);
    assert.ok(throttles.on({ regionCode: 'NG', countryCode: '+234', network: 'MTN', provider: 'twilio' }, at));
    assert.equal(throttles.on({ regionCode: 'NG', countryCode: '+234', network: 'MTN', provider: 'smpp' }, at), null);
    // Another network of the country, or its numbers of no known network, are not throttled with it.
    assert.equal(throttles.on({ regionCode: 'NG', countryCode: '+234', network: 'Glo', provider: 'twilio' }, at), null);
    assert.equal(throttles.on({ regionCode: 'NG', countryCode: '+234', network: '', provider: 'twilio' }, at), null);
    assert.equal(throttles.on({ regionCode: 'GH', countryCode: '+233', network: 'MTN', provider: 'twilio' }, at), null);
    assert.equal(throttles.on({ regionCode: 'NG', countryCode: '+234', network: 'MTN', provider: 'twilio' }, until), null);
  });
});

describe('ConversionWatch', () => {
  it('reads one read at a time: a read asked during another lands after it, so an older read never puts back older figures', async () => {
    let verifiedNow = 9;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const none = async () => [];
    const store: ConversionStore = {
      // Each read answers the figures of when it started; the first one is held back past the second.
      traffic: async () => {
        const figures = [route('ZA', 'log', 10, verifiedNow)];
        if ((reads += 1) === 1) await held;
        return figures;
      },
      throttle: none,
      active: none,
      clientTraffic: none,
      throttleClients: none,
      activeClients: none,
      resendTraffic: none,
      throttleResends: none,
      activeResends: none,
      verifiedCountries: none,
    };
    const watch = new ConversionWatch({ store, policy, clock: new TestClock(), firstProvider: () => 'log' });
    const periodic = watch.refresh();
    await new Promise((resolve) => setImmediate(resolve));
    verifiedNow = 10;
    const asked = watch.refresh();
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([periodic, asked]);
    assert.equal(watch.verifiedIn('ZA'), 10);
  });
});
