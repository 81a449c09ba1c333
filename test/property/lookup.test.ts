import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { getCountries, getCountryCallingCode, getExampleNumber } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/examples.mobile.json';
import { lineTypeOf, lineTypes } from '../../src/domain/line-type.js';
import { parsePhone, readRefusedPhone } from '../../src/domain/phone.js';
import { GoogleNumberMetadata } from '../../src/metadata/google-number-metadata.js';

const params = { numRuns: Number(process.env.FC_NUM_RUNS ?? 200), seed: Number(process.env.FC_SEED ?? 20261121) };

const metadata = new GoogleNumberMetadata();
const callingCodesInUse = new Set(getCountries().map((region) => `+${getCountryCallingCode(region)}`));
const mobileTypes: readonly string[] = ['MOBILE', 'FIXED_LINE_OR_MOBILE', 'PAGER'];

/** Every region's example mobile number in local digits, with its calling code. */
const samples = getCountries().flatMap((region) => {
  const example = getExampleNumber(region, examples);
  return example ? [{ countryCode: `+${example.countryCallingCode}`, national: example.nationalNumber }] : [];
});

/** A number near a region's example: its last digits replaced by arbitrary ones (valid or not). */
const nearExample = fc
  .record({
    sample: fc.constantFrom(...samples),
    tail: fc.stringMatching(/^\d{1,4}$/),
    trunkZero: fc.boolean(),
  })
  .map(({ sample, tail, trunkZero }) => ({
    countryCode: sample.countryCode,
    phoneNumber: `${trunkZero ? '0' : ''}${sample.national.slice(0, Math.max(1, sample.national.length - tail.length))}${tail}`,
  }));

describe('lookup properties', () => {
  it('any valid number gets a line type from the list, the same as lineTypeOf, and data of the right shape', async () => {
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(nearExample, async ({ countryCode, phoneNumber }) => {
        const phone = parsePhone(countryCode, phoneNumber);
        if (!phone) return;
        valid += 1;
        const facts = await metadata.describe(phone.e164);
        assert.equal(facts.valid, true, phone.e164);
        assert.ok((lineTypes as readonly string[]).includes(facts.lineType), facts.lineType);
        assert.equal(facts.lineType, lineTypeOf(phone.e164));
        assert.ok(facts.regionCode === null || /^[A-Z]{2}$/.test(facts.regionCode), String(facts.regionCode));
        if (facts.carrier !== null) {
          assert.ok(facts.carrier.length > 0);
          assert.ok(mobileTypes.includes(facts.lineType), `${phone.e164} ${facts.lineType} has carrier ${facts.carrier}`);
        }
        for (const zone of facts.timeZones) assert.match(zone, /^[A-Z][A-Za-z_]+\/[A-Za-z_/\-+0-9]+$/);
      }),
      params,
    );
    assert.ok(valid > params.numRuns / 4, `only ${valid} of ${params.numRuns} generated numbers were valid`);
  });

  it('a number that is well formed but refused still reads as E.164-like digits under its own country code', () => {
    fc.assert(
      fc.property(
        fc.oneof(nearExample, fc.record({ countryCode: fc.stringMatching(/^\+[1-9]\d{0,2}$/), phoneNumber: fc.stringMatching(/^\d{1,17}$/) })),
        ({ countryCode, phoneNumber }) => {
          if (parsePhone(countryCode, phoneNumber)) return;
          const read = readRefusedPhone(countryCode, phoneNumber);
          assert.ok(read.e164.startsWith(countryCode), `${countryCode} ${phoneNumber} -> ${read.e164}`);
          assert.match(read.e164, /^\+\d+$/);
          assert.ok(read.regionCode === null || /^[A-Z]{2}$/.test(read.regionCode));
          // Under a calling code in use, the reading is never some other valid number. Under one no country uses
          // (+3) it is the code and the digits as asked, which may spell another country's number (+36...).
          if (callingCodesInUse.has(countryCode)) assert.equal(lineTypeOf(read.e164), 'UNKNOWN', `${countryCode} ${phoneNumber} -> ${read.e164}`);
        },
      ),
      params,
    );
  });

  it('lineTypeOf and describe never throw, whatever they are given', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.stringMatching(/^\+\d{0,20}$/)), async (input) => {
        assert.ok((lineTypes as readonly string[]).includes(lineTypeOf(input)));
        const facts = await metadata.describe(input);
        assert.ok((lineTypes as readonly string[]).includes(facts.lineType));
      }),
      params,
    );
  });
});
