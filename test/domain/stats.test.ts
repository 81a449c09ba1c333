import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nonGeographicRegion, parseE164, regionOfCallingCode } from '../../src/domain/phone.js';
import { parseDay, settleTraffic, statsRange, type ClientDailyTraffic } from '../../src/domain/stats.js';

const now = new Date('2026-11-21T23:59:59.999Z');

describe('stats days (contract 10)', () => {
  it('defaults to the last 7 UTC days, today included', () => {
    assert.deepEqual(statsRange({}, now), {
      range: { from: '2026-11-15', to: '2026-11-21', since: new Date('2026-11-15T00:00:00Z'), before: new Date('2026-11-22T00:00:00Z') },
    });
    assert.deepEqual(statsRange({ to: '2026-03-02' }, now), {
      range: { from: '2026-02-24', to: '2026-03-02', since: new Date('2026-02-24T00:00:00Z'), before: new Date('2026-03-03T00:00:00Z') },
    });
    const from = statsRange({ from: '2026-11-20' }, now);
    assert.ok('range' in from);
    assert.deepEqual([from.range.from, from.range.to], ['2026-11-20', '2026-11-21']);
  });

  it('takes one day, and up to 366 days both included', () => {
    assert.ok('range' in statsRange({ from: '2026-11-21', to: '2026-11-21' }, now));
    assert.ok('range' in statsRange({ from: '2028-01-01', to: '2028-12-31' }, now));
    assert.ok('range' in statsRange({ from: '2025-11-21', to: '2026-11-21' }, now));
    assert.deepEqual(statsRange({ from: '2025-11-20', to: '2026-11-21' }, now), {
      problems: [{ field: 'from', issue: 'must be at most 366 days before to, both included (367 asked)' }],
    });
  });

  it('refuses days the calendar does not have, naming each, and from after to', () => {
    assert.deepEqual(statsRange({ from: '2026-02-29', to: '2026-13-01' }, now), {
      problems: [
        { field: 'from', issue: 'must be a calendar day, YYYY-MM-DD' },
        { field: 'to', issue: 'must be a calendar day, YYYY-MM-DD' },
      ],
    });
    assert.deepEqual(statsRange({ from: '2026-11-22' }, now), { problems: [{ field: 'from', issue: 'must not be after to (2026-11-21)' }] });
    assert.deepEqual(statsRange({ from: '0000-01-01', to: '0000-01-02' }, now), {
      problems: [
        { field: 'from', issue: 'must be 0001-01-01 or later' },
        { field: 'to', issue: 'must be 0001-01-01 or later' },
      ],
    });
    const first = statsRange({ to: '0001-01-03' }, now);
    assert.ok('range' in first);
    assert.deepEqual([first.range.from, first.range.since], ['0001-01-01', new Date('0001-01-01T00:00:00Z')], 'the default range stops at the first day');
    for (const day of ['2028-02-29', '2026-12-31', '0001-01-01']) assert.equal(parseDay(day)?.toISOString().slice(0, 10), day, day);
    for (const day of ['2026-02-29', '2026-04-31', '2026-00-10', '2026-1-01', ' 2026-01-01', '2026-01-01T00:00:00Z', '']) {
      assert.equal(parseDay(day), null, day);
    }
  });
});

describe('stats rows', () => {
  const row = (over: Partial<ClientDailyTraffic>): ClientDailyTraffic => ({
    clientId: 'a',
    day: '2026-11-21',
    regionCode: 'NG',
    countryCode: '+234',
    channel: 'SMS',
    sends: 1,
    delivered: 1,
    verified: 1,
    cost: '0',
    costPerVerified: null,
    ...over,
  });

  it('names the region of old rows by their calling code when it has one region, joining the new rows of it', () => {
    const settled = settleTraffic([
      row({ regionCode: null, sends: 2 }),
      row({ sends: 3, delivered: 0 }),
      row({ regionCode: null, countryCode: '+1' }),
      row({ regionCode: null, countryCode: '+800' }),
      row({ regionCode: '001', countryCode: '+882' }),
      row({ day: '2026-11-20', regionCode: 'US', countryCode: '+1' }),
      row({ clientId: 'b', sends: 7 }),
    ]);
    assert.deepEqual(
      settled.map((r) => [r.day, r.regionCode, r.countryCode, r.sends, r.delivered, r.verified]),
      [
        ['2026-11-20', 'US', '+1', 1, 1, 1],
        ['2026-11-21', '001', '+800', 1, 1, 1],
        ['2026-11-21', '001', '+882', 1, 1, 1],
        ['2026-11-21', 'NG', '+234', 12, 2, 3],
        ['2026-11-21', null, '+1', 1, 1, 1],
      ],
      'without a key, every client is one',
    );
    const byClient = settleTraffic([row({ sends: 2 }), row({ clientId: 'b', sends: 7 }), row({ regionCode: null })], (r) => r.clientId);
    assert.deepEqual(
      byClient.map((r) => [r.clientId, r.sends]),
      [
        ['a', 3],
        ['b', 7],
      ],
    );
  });

  it('adds up the cost of the rows it joins exactly, and divides it by the verified codes to 6 decimals', () => {
    const settled = settleTraffic([
      row({ regionCode: null, sends: 2, verified: 1, cost: '0.1' }),
      row({ sends: 1, verified: 2, cost: '0.2' }),
      row({ day: '2026-11-20', verified: 0, cost: '0.0125' }),
    ]);
    assert.deepEqual(
      settled.map((r) => [r.day, r.cost, r.costPerVerified]),
      [
        ['2026-11-20', '0.0125', null],
        // 0.1 + 0.2 in binary floating point is 0.30000000000000004; 0.3 / 3 verified.
        ['2026-11-21', '0.3', '0.1'],
      ],
    );
    assert.equal(settleTraffic([row({ verified: 3, cost: '1' })])[0]?.costPerVerified, '0.333333');
  });

  it("takes a calling code's region as libphonenumber reads its numbers", () => {
    for (const [code, sample] of [
      ['+234', '+2348031234567'],
      ['+233', '+233241234567'],
      ['+800', '+80012345678'],
    ] as const) {
      assert.equal(regionOfCallingCode(code), parseE164(sample)?.region ?? nonGeographicRegion, code);
    }
    assert.equal(regionOfCallingCode('+234'), 'NG');
    assert.equal(regionOfCallingCode('+800'), '001');
    for (const shared of ['+1', '+44', '+7', '+262']) assert.equal(regionOfCallingCode(shared), null, shared);
  });
});
