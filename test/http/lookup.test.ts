import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { lineTypes } from '../../src/domain/line-type.js';
import { parsePhone } from '../../src/domain/phone.js';
import { assertNoLeak, assertV1ErrorShape, createLookup, detailFields, expectV1Error, isoMillis, uuidV4ish, type LookupBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

const lookupFields = ['carrier', 'countryCode', 'createdAt', 'id', 'lineType', 'phoneNumber', 'regionCode', 'status', 'timeZones', 'valid'];

/** Contract 11: number lookups by outcome (their shared security cases are in security.test.ts with every route). */
forEachDatabase('number lookup', (kind) => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await createHarness(kind);
    token = await h.token(['lookup:request', 'lookup:status'], await h.client(['lookup:request', 'lookup:status']));
  });
  after(() => h.close());

  const lookUp = (body: unknown, t: string = token) => h.call('POST', '/v1/lookup/request', t, body);
  const fetchOne = (id: string, t: string = token) => h.call('GET', `/v1/lookup/${id}`, t);

  /** The answer to a lookup, which must be a 200 "Lookup completed". */
  async function answer(countryCode: string, phoneNumber: string): Promise<LookupBody> {
    const res = await lookUp({ countryCode, phoneNumber });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { status: boolean; message: string; data: LookupBody };
    assert.equal(body.status, true);
    assert.equal(body.message, 'Lookup completed');
    assert.deepEqual(Object.keys(body).sort(), ['data', 'message', 'status']);
    assert.deepEqual(Object.keys(body.data).sort(), lookupFields, 'exactly the contract fields');
    assert.match(body.data.id, uuidV4ish);
    assert.equal(body.data.status, 'COMPLETED');
    assert.match(body.data.createdAt, isoMillis);
    assert.ok((lineTypes as readonly string[]).includes(body.data.lineType), body.data.lineType);
    return body.data;
  }

  describe('POST /v1/lookup/request', () => {
    it('describes a Nigerian mobile: MTN, Africa/Lagos, from the local format with its trunk prefix', async () => {
      const data = await answer('+234', '08031234567');
      assert.deepEqual(
        { ...data, id: undefined, createdAt: undefined },
        {
          id: undefined,
          createdAt: undefined,
          status: 'COMPLETED',
          phoneNumber: '+2348031234567',
          countryCode: '+234',
          regionCode: 'NG',
          valid: true,
          lineType: 'MOBILE',
          carrier: 'MTN',
          timeZones: ['Africa/Lagos'],
        },
      );
      assert.equal(data.createdAt, h.clock.now().toISOString());
      // The same number without its trunk prefix is the same number.
      assert.equal((await answer('+234', '8031234567')).phoneNumber, '+2348031234567');
      assert.equal((await answer('+234', '08051234567')).carrier, 'Glo');
    });

    it('describes a Nigerian fixed line: no carrier (Google names carriers of mobile ranges only)', async () => {
      const data = await answer('+234', '02012345678');
      assert.deepEqual(
        [data.phoneNumber, data.regionCode, data.valid, data.lineType, data.carrier, data.timeZones],
        ['+2342012345678', 'NG', true, 'FIXED_LINE', null, ['Africa/Lagos']],
      );
    });

    it('gives a US number the time zone of its area code, and a US toll-free number every zone of +1', async () => {
      const newYork = await answer('+1', '2125550123');
      assert.deepEqual(
        [newYork.phoneNumber, newYork.regionCode, newYork.lineType, newYork.carrier, newYork.timeZones],
        ['+12125550123', 'US', 'FIXED_LINE_OR_MOBILE', null, ['America/New_York']],
      );
      assert.deepEqual((await answer('+1', '4155550123')).timeZones, ['America/Los_Angeles']);
      const tollFree = await answer('+1', '8005550123');
      assert.equal(tollFree.lineType, 'TOLL_FREE');
      assert.equal(tollFree.valid, true);
      assert.equal(tollFree.carrier, null);
      assert.ok(tollFree.timeZones.length > 10, `${tollFree.timeZones.length} zones`);
      for (const zone of ['America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles', 'Pacific/Honolulu']) {
        assert.ok(tollFree.timeZones.includes(zone), zone);
      }
    });

    it('names premium-rate, shared-cost and other special types', async () => {
      for (const [countryCode, phoneNumber, lineType, regionCode] of [
        ['+1', '9005550123', 'PREMIUM_RATE', 'US'],
        ['+44', '09012345678', 'PREMIUM_RATE', 'GB'],
        ['+44', '08001234567', 'TOLL_FREE', 'GB'],
        ['+49', '0180212345', 'SHARED_COST', 'DE'],
        ['+44', '05612345678', 'VOIP', 'GB'],
        ['+44', '07012345678', 'PERSONAL_NUMBER', 'GB'],
        ['+39', '33123456789', 'VOICEMAIL', 'IT'],
      ] as const) {
        const data = await answer(countryCode, phoneNumber);
        assert.deepEqual([data.valid, data.lineType, data.regionCode], [true, lineType, regionCode], `${countryCode} ${phoneNumber}`);
      }
    });

    it('gives the region within a shared calling code, and the carrier of a UK mobile', async () => {
      const manx = await answer('+44', '07624123456');
      assert.deepEqual([manx.regionCode, manx.lineType, manx.carrier], ['IM', 'MOBILE', 'Manx Telecom']);
      const three = await answer('+44', '07400123456');
      assert.deepEqual([three.regionCode, three.carrier], ['GB', 'Three']);
      assert.ok(three.timeZones.includes('Europe/London'));
    });

    it('answers a well-formed number that is not valid for its country with valid false, not an error', async () => {
      const ng = await answer('+234', '0000000000');
      assert.deepEqual(
        { ...ng, id: undefined, createdAt: undefined },
        {
          id: undefined,
          createdAt: undefined,
          status: 'COMPLETED',
          phoneNumber: '+2340000000000',
          countryCode: '+234',
          regionCode: 'NG',
          valid: false,
          lineType: 'UNKNOWN',
          carrier: null,
          timeZones: [],
        },
      );
      // libphonenumber drops a trunk prefix only when what follows could be a number of the country: the
      // answer shows the number as it read it, not a guess.
      assert.equal((await answer('+234', '08000')).phoneNumber, '+23408000');
      assert.equal((await answer('+44', '08031234567')).phoneNumber, '+448031234567');
      // +1 and +44 are shared by several regions: which one an invalid number would be in is not known.
      for (const [countryCode, phoneNumber, e164] of [
        ['+1', '1234567890', '+11234567890'],
        ['+44', '08031234567', '+448031234567'],
        ['+999', '12345678', '+99912345678'],
        ['+234', '1', '+2341'],
      ] as const) {
        const data = await answer(countryCode, phoneNumber);
        assert.deepEqual(
          [data.phoneNumber, data.valid, data.lineType, data.carrier, data.timeZones],
          [e164, false, 'UNKNOWN', null, []],
          `${countryCode} ${phoneNumber}`,
        );
        assert.equal(data.regionCode, countryCode === '+234' ? 'NG' : null);
      }
    });

    it('stores each lookup for its client, a new one each time', async () => {
      const c = await h.client(['lookup:request']);
      const mine = await h.token(['lookup:request'], c);
      const first = await createLookup(h, mine, { phoneNumber: '08031234567' });
      const second = await createLookup(h, mine, { phoneNumber: '08031234567' });
      assert.notEqual(first.id, second.id);
      const rows = await h.services.db.db.selectFrom('lookups').selectAll().where('id', 'in', [first.id, second.id]).execute();
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.equal(row.client_id, c.clientId);
        assert.deepEqual([row.phone_number, row.line_type, row.carrier, row.time_zones], ['+2348031234567', 'MOBILE', 'MTN', ['Africa/Lagos']]);
      }
    });

    it('ignores unknown fields (contract 1)', async () => {
      const data = await answer('+234', '08031234567');
      const res = await lookUp({ countryCode: '+234', phoneNumber: '08031234567', type: 'SEND_SMS', extra: { a: 1 } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((res.json().data as LookupBody).carrier, data.carrier);
    });

    it('names each missing or ill-typed field with 400 VALIDATION_ERROR, and stores nothing', async () => {
      const before = await countLookups();
      const none = expectV1Error(await lookUp({}), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(none), ['phoneNumber']);
      const localOnly = expectV1Error(await lookUp({ phoneNumber: '08031234567' }), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(localOnly), ['countryCode']);
      const onlyCode = expectV1Error(await lookUp({ countryCode: '+234' }), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(onlyCode), ['phoneNumber']);
      const typed = expectV1Error(await lookUp({ countryCode: 234, phoneNumber: 8031234567 }), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(typed), ['countryCode', 'phoneNumber']);
      assert.equal(await countLookups(), before);
    });

    it('refuses a malformed country code or phone number as a create does', async () => {
      for (const [countryCode, phoneNumber, field] of [
        ['234', '08031234567', 'countryCode'],
        ['+0234', '08031234567', 'countryCode'],
        ['+2345', '08031234567', 'countryCode'],
        ['+', '08031234567', 'countryCode'],
        ['+234', '++2348031234567', 'phoneNumber'],
        ['+234', '0803 123 4567', 'phoneNumber'],
        ['+234', '', 'phoneNumber'],
        ['+234', '1'.repeat(18), 'phoneNumber'],
      ]) {
        const body = expectV1Error(await lookUp({ countryCode, phoneNumber }), 400, 'VALIDATION_ERROR');
        assert.deepEqual(detailFields(body), [field], `${countryCode} ${phoneNumber}`);
      }
    });

    it('answers malformed JSON with 400 VALIDATION_ERROR and a body that is not JSON with 415', async () => {
      for (const raw of ['{', '{"countryCode": "+234",}', '', 'null', '[1,2]', '"text"']) {
        const res = await h.call('POST', '/v1/lookup/request', token, raw, { 'content-type': 'application/json' });
        expectV1Error(res, 400, 'VALIDATION_ERROR');
      }
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await h.call('POST', '/v1/lookup/request', token, 'countryCode=%2B234&phoneNumber=08031234567', { 'content-type': contentType });
        expectV1Error(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
      const big = await lookUp({ countryCode: '+234', phoneNumber: '08031234567', pad: 'x'.repeat(16 * 1024) });
      expectV1Error(big, 413, 'PAYLOAD_TOO_LARGE');
    });
  });

  describe('POST /v1/lookup/request under arbitrary input', () => {
    it('answers 200 with valid exactly when parsePhone accepts the number, or 400; never a 500', async () => {
      const anyValue = fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.string(), { maxLength: 2 }));
      const body = fc.record(
        {
          countryCode: fc.oneof(fc.constantFrom('+234', '+1', '+44', '+999', '+3', '+0', '234'), fc.stringMatching(/^\+\d{1,4}$/), anyValue),
          phoneNumber: fc.oneof(fc.stringMatching(/^0?[2-9]\d{6,10}$/), fc.stringMatching(/^\d{0,20}$/), anyValue),
          extra: anyValue,
        },
        { requiredKeys: [] },
      );
      const seen = { refused: 0, valid: 0, notValid: 0 };
      await fc.assert(
        fc.asyncProperty(body, async (b) => {
          const res = await lookUp(b);
          assert.ok(res.statusCode === 200 || res.statusCode === 400, `${res.statusCode} ${res.body}`);
          assertNoLeak(res.body);
          const answered: unknown = res.json();
          if (res.statusCode === 400) {
            seen.refused += 1;
            return assertV1ErrorShape(answered);
          }
          const data = (answered as { data: LookupBody }).data;
          assert.deepEqual(Object.keys(data).sort(), lookupFields);
          assert.ok((lineTypes as readonly string[]).includes(data.lineType));
          const phone = typeof b.countryCode === 'string' && typeof b.phoneNumber === 'string' ? parsePhone(b.countryCode, b.phoneNumber) : null;
          assert.equal(data.valid, phone !== null, JSON.stringify(b));
          seen[phone ? 'valid' : 'notValid'] += 1;
          assert.equal(data.phoneNumber.startsWith(String(b.countryCode)), true);
          if (phone) assert.equal(data.phoneNumber, phone.e164);
          else assert.deepEqual([data.lineType, data.carrier, data.timeZones], ['UNKNOWN', null, []]);
        }),
        { numRuns: Number(process.env.FC_NUM_RUNS ?? 100), seed: Number(process.env.FC_SEED ?? 20261121) },
      );
      // The generators reach all three outcomes, so none of the checks above is vacuous.
      assert.ok(seen.refused > 0 && seen.valid > 0 && seen.notValid > 0, JSON.stringify(seen));
    });
  });

  describe('GET /v1/lookup/{id}', () => {
    it('answers the same record as the lookup did, with "Lookup fetched"', async () => {
      for (const [countryCode, phoneNumber] of [['+234', '08031234567'], ['+1', '8005550123'], ['+234', '0000000000']] as const) {
        const created = await answer(countryCode, phoneNumber);
        h.clock.advance(1000);
        const res = await fetchOne(created.id);
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json() as { status: boolean; message: string; data: LookupBody };
        assert.equal(body.status, true);
        assert.equal(body.message, 'Lookup fetched');
        assert.deepEqual(body.data, created);
      }
    });

    it('answers an unknown or malformed id with 404 NOT_FOUND', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '00000000-0000-4000-8000-00000000000Z', "1'; DROP TABLE lookups; --"]) {
        const body = expectV1Error(await fetchOne(encodeURIComponent(id)), 404, 'NOT_FOUND');
        assert.equal(body.message, 'Lookup not found');
      }
    });

    it("answers another client's lookup with 404 and nothing of it", async () => {
      const theirs = await createLookup(h, token, { phoneNumber: '08031234567' });
      const other = await h.token(['lookup:status'], await h.client(['lookup:status']));
      const res = await fetchOne(theirs.id, other);
      const body = expectV1Error(res, 404, 'NOT_FOUND');
      assert.equal(body.data, undefined);
      assert.ok(!res.body.includes(theirs.id) && !res.body.includes(theirs.phoneNumber) && !res.body.includes('MTN'), res.body);
    });

    it('is not a verification: a lookup id is unknown to GET /v1/otp/{id}, and a verification id to GET /v1/lookup/{id}', async () => {
      const both = await h.token(['lookup:request', 'lookup:status', 'otp:send'], await h.client(['lookup:request', 'lookup:status', 'otp:send']));
      const lookup = await createLookup(h, both);
      expectV1Error(await h.call('GET', `/v1/otp/${lookup.id}`, both), 404, 'NOT_FOUND');
      const created = await h.call('POST', '/v1/otp/request', both, { countryCode: '+234', phoneNumber: '08039876543' });
      assert.equal(created.statusCode, 200, created.body);
      expectV1Error(await fetchOne((created.json().data as { id: string }).id, both), 404, 'NOT_FOUND');
    });
  });

  async function countLookups(): Promise<number> {
    const row = await h.services.db.db.selectFrom('lookups').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
});
