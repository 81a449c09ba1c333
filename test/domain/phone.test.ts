import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseE164, parsePhone, readRefusedPhone } from '../../src/domain/phone.js';

describe('phone numbers (contract 1)', () => {
  it('parses a local number with or without its trunk prefix to E.164', () => {
    const expected = { e164: '+2348031234567', countryCode: '+234', local: '08031234567', region: 'NG' };
    assert.deepEqual(parsePhone('+234', '08031234567'), expected);
    assert.deepEqual(parsePhone('+234', '8031234567'), expected);
    assert.deepEqual(parsePhone('+44', '07400123456'), { e164: '+447400123456', countryCode: '+44', local: '07400123456', region: 'GB' });
    assert.deepEqual(parsePhone('+1', '2015550123'), { e164: '+12015550123', countryCode: '+1', local: '2015550123', region: 'US' });
  });

  it('refuses numbers that are not valid for the country code', () => {
    for (const [cc, n] of [
      ['+234', '123'],
      ['+234', '0000000000'],
      ['+44', '08031234567'],
      ['+1', '0000000000'],
      ['+234', '080312345678901'],
    ] as const) {
      assert.equal(parsePhone(cc, n), null, `${cc} ${n}`);
    }
  });

  it('refuses a calling code no country uses, without throwing', () => {
    for (const cc of ['+999', '+0', '+990', '+28']) assert.equal(parsePhone(cc, '12345678'), null, cc);
  });

  it('refuses malformed input before parsing', () => {
    for (const [cc, n] of [
      ['234', '08031234567'],
      ['+', '08031234567'],
      ['+2345', '08031234567'],
      ['+234', '+2348031234567'],
      ['+234', '0803 123 4567'],
      ['+234', ''],
      ['+234', '1'.repeat(18)],
    ] as const) {
      assert.equal(parsePhone(cc, n), null, `${cc} ${n}`);
    }
  });

  it('parses E.164 numbers, and refuses others', () => {
    assert.deepEqual(parseE164('+2349010000123'), { e164: '+2349010000123', countryCode: '+234', local: '09010000123', region: 'NG' });
    for (const n of ['2349010000123', '+999123456789', '+0123456', '+234', '+23490100001234567', '']) assert.equal(parseE164(n), null, n);
  });

  it('reads a number it refused as libphonenumber reads it, with the region only when one region has the code', () => {
    for (const [cc, n, e164, regionCode] of [
      ['+234', '0000000000', '+2340000000000', 'NG'],
      ['+234', '08000', '+23408000', 'NG'],
      ['+234', '1', '+2341', 'NG'],
      ['+44', '08031234567', '+448031234567', null],
      ['+1', '1234567890', '+11234567890', null],
      ['+7', '0000', '+70000', null],
      ['+999', '12345678', '+99912345678', null],
    ] as const) {
      assert.deepEqual(readRefusedPhone(cc, n), { e164, regionCode }, `${cc} ${n}`);
    }
  });
});
