import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLineType, lineTypeOf, lineTypes } from '../../src/domain/line-type.js';

describe('line types (contract 11)', () => {
  it("maps each of libphonenumber's types to the contract's name", () => {
    const examples: Record<(typeof lineTypes)[number], string> = {
      MOBILE: '+2348031234567',
      FIXED_LINE: '+2342012345678',
      FIXED_LINE_OR_MOBILE: '+12015550123',
      VOIP: '+445612345678',
      TOLL_FREE: '+18005550123',
      PREMIUM_RATE: '+19005550123',
      SHARED_COST: '+49180212345',
      UAN: '+445512345678',
      PAGER: '+447640123456',
      VOICEMAIL: '+3933123456789',
      PERSONAL_NUMBER: '+447012345678',
      UNKNOWN: '+2340000000000',
    };
    for (const [type, e164] of Object.entries(examples)) assert.equal(lineTypeOf(e164), type, e164);
    assert.deepEqual(Object.keys(examples).sort(), [...lineTypes].sort(), 'every type has an example');
  });

  it('reads UNKNOWN for anything that is not a valid E.164 number, without throwing', () => {
    for (const input of ['', '+', '2348031234567', '+999123456789', '+0123', '+23480312345671234567', 'garbage', '+234803123456a']) {
      assert.equal(lineTypeOf(input), 'UNKNOWN', input);
    }
  });

  it('knows its own names and no others', () => {
    for (const type of lineTypes) assert.equal(isLineType(type), true);
    for (const other of ['mobile', 'SATELLITE', '', 'UNKNOWN ']) assert.equal(isLineType(other), false, other);
  });
});
