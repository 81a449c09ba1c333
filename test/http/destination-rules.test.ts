import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { expectV1Error, sendCounts } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Contract 10: ALLOWED_COUNTRIES and BLOCKED_LINE_TYPES refuse a create before anything is sent or counted. */
forEachDatabase('destination rules', (kind) => {
  let h: Harness;
  before(async () => {
    // Default BLOCKED_LINE_TYPES; the US is allowed so that its premium-rate range meets the line-type rule.
    h = await createHarness(kind, { env: { ALLOWED_COUNTRIES: 'NG,US' } });
  });
  after(() => h.close());

  const create = (token: string, countryCode: string, phoneNumber: string) =>
    h.call('POST', '/v1/otp/request', token, { countryCode, phoneNumber });

  const verificationRows = async (): Promise<number> => {
    const row = await h.services.db.db.selectFrom('verifications').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  };

  it('refuses a country outside ALLOWED_COUNTRIES and a blocked line type with 403 NUMBER_NOT_ALLOWED, details naming the rule', async () => {
    const token = await h.token();
    const before = { ...(await sendCounts(h)), verifications: await verificationRows() };
    const country = expectV1Error(await create(token, '+44', '07400123456'), 403, 'NUMBER_NOT_ALLOWED');
    assert.deepEqual(country.error.details, [
      { field: 'phoneNumber', issue: "numbers of GB are not among the service's allowed countries (ALLOWED_COUNTRIES: NG, US)" },
      { factor: 'destination_not_permitted', rule: 'countries', mode: 'enforce' },
    ]);
    const premium = expectV1Error(await create(token, '+1', '9005550123'), 403, 'NUMBER_NOT_ALLOWED');
    assert.match(premium.error.details?.[0]?.issue ?? '', /^PREMIUM_RATE numbers are refused \(BLOCKED_LINE_TYPES: PREMIUM_RATE,/);
    assert.deepEqual(premium.error.details?.[1], { factor: 'invalid_phone_line', rule: 'line-types', mode: 'enforce' });
    assert.deepEqual({ ...(await sendCounts(h)), verifications: await verificationRows() }, before, 'nothing written, sent nor queued');
    // An allowed destination still goes through.
    assert.equal((await create(token, '+1', '2015550123')).statusCode, 200);
  });
});
