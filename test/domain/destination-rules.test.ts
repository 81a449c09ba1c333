import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { destinationRefused, type DestinationPolicy } from '../../src/domain/destination-rules.js';

/** What the rules said, and which of them said it (countries or line types). */
const refusal = (...args: Parameters<typeof destinationRefused>): string | null => {
  const refused = destinationRefused(...args);
  if (refused) assert.equal(refused.rule, /numbers are refused \(BLOCKED_LINE_TYPES/.test(refused.detail) ? 'line-types' : 'countries');
  return refused?.detail ?? null;
};
import { parsePhone, type PhoneNumber } from '../../src/domain/phone.js';

const phone = (countryCode: string, local: string): PhoneNumber => {
  const p = parsePhone(countryCode, local);
  assert.ok(p, `${countryCode} ${local} parses`);
  return p;
};
const nigerianMobile = phone('+234', '08031234567');
const britishMobile = phone('+44', '07400123456');
const usPremium = phone('+1', '9005550123');
const germanSharedCost = phone('+49', '0180212345');
const open: DestinationPolicy = { allowedCountries: null, blockedLineTypes: [] };
const defaults: DestinationPolicy = { allowedCountries: null, blockedLineTypes: ['PREMIUM_RATE', 'SHARED_COST', 'UAN', 'PAGER', 'VOICEMAIL'] };

describe('destination rules (contract 10)', () => {
  it('lets everything through when neither list is set', () => {
    for (const p of [nigerianMobile, britishMobile, usPremium, germanSharedCost]) assert.equal(refusal(p, open, null), null, p.e164);
  });

  it("refuses a country outside ALLOWED_COUNTRIES, naming the setting and the country, before the client's own list", () => {
    const policy: DestinationPolicy = { ...open, allowedCountries: ['GH', 'NG'] };
    assert.equal(refusal(nigerianMobile, policy, null), null);
    assert.equal(
      refusal(britishMobile, policy, ['GB']),
      "numbers of GB are not among the service's allowed countries (ALLOWED_COUNTRIES: GH, NG)",
    );
  });

  it("narrows to the client's own list within the service's", () => {
    const policy: DestinationPolicy = { ...open, allowedCountries: ['GB', 'NG'] };
    assert.equal(refusal(britishMobile, policy, ['GB']), null);
    assert.equal(refusal(nigerianMobile, policy, ['GB']), "numbers of NG are not among this client's allowed countries (GB)");
    assert.equal(refusal(nigerianMobile, open, []), "numbers of NG are not among this client's allowed countries (none)");
  });

  it('refuses a number of a blocked line type, naming the type, in any allowed country', () => {
    assert.equal(refusal(usPremium, defaults, null), 'PREMIUM_RATE numbers are refused (BLOCKED_LINE_TYPES: PREMIUM_RATE, SHARED_COST, UAN, PAGER, VOICEMAIL)');
    assert.match(refusal(germanSharedCost, defaults, ['DE']) ?? '', /^SHARED_COST numbers are refused/);
    assert.equal(refusal(nigerianMobile, defaults, null), null);
    assert.equal(refusal(usPremium, { ...open, blockedLineTypes: ['PAGER'] }, null), null);
  });

  it('refuses a number of no country whenever a country list is set', () => {
    const global = phone('+800', '12345678');
    assert.equal(global.region, null);
    assert.equal(refusal(global, open, null), null);
    assert.match(refusal(global, { ...open, allowedCountries: ['NG'] }, null) ?? '', /^numbers of no country are not among the service's/);
  });
});
