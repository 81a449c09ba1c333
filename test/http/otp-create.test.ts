import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createVerification,
  detailFields,
  e164Of,
  expectV1Error,
  isoMillis,
  nextLocalNumber,
  sendCounts,
  uuidV4ish,
  type RecordBody,
} from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

const recordFields = [
  'cost',
  'counter',
  'country',
  'countryCode',
  'createdAt',
  'deliveries',
  'delivery',
  'expiresAt',
  'failureReason',
  'fallback',
  'id',
  'otp',
  'pairedNumber',
  'phoneNumber',
  'reference',
  'risk',
  'status',
  'type',
  'updatedAt',
  'webhookUrl',
];

let kenyan = 0;
/** A Kenyan mobile number not used before in this file (the per-number limits hold across tests). */
const nextKenyan = () => `07123${String(++kenyan).padStart(5, '0')}`;

/** Contract 3.1 and 3.4: POST /v1/otp/request, by outcome. */
forEachDatabase('create verification', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      env: {
        SMS_SENDER_NUMBER: '+447400123456',
        CALLER_ID_RANGES: '+2348120000000-+2348120009999',
        OTP_TTL_SECONDS: '300',
      },
    });
  });
  after(() => h.close());

  const create = async (body: unknown, headers: Record<string, string> = {}, token?: string) =>
    h.call('POST', '/v1/otp/request', token ?? (await h.token(['otp:send'])), body, headers);

  describe('happy', () => {
    it('creates an SMS verification by default, in the seed envelope', async () => {
      const local = nextLocalNumber();
      const res = await create({ countryCode: '+234', phoneNumber: local });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = res.json() as { status: boolean; message: string; data: RecordBody };
      assert.deepEqual(Object.keys(body).sort(), ['data', 'message', 'status']);
      assert.equal(body.status, true);
      assert.equal(body.message, 'OTP sent');
      const d = body.data;
      assert.deepEqual(Object.keys(d).sort(), recordFields);
      assert.deepEqual(d.risk, { verdict: 'allow', factors: [] });
      assert.match(d.id, uuidV4ish);
      assert.equal(d.type, 'SMS');
      assert.equal(d.status, 'PENDING');
      assert.match(d.otp, /^\d{6}$/);
      assert.equal(d.phoneNumber, e164Of(local));
      assert.equal(d.countryCode, '+234');
      assert.equal(d.country, d.countryCode);
      assert.equal(d.counter, 0);
      assert.equal(d.pairedNumber, '+447400123456', 'SMS_SENDER_NUMBER, a UK number, in E.164 to a Nigerian number');
      assert.equal(d.webhookUrl, null);
      assert.equal(d.reference, null);
      for (const t of [d.createdAt, d.updatedAt, d.expiresAt]) assert.match(t, isoMillis);
      assert.equal(d.createdAt, h.clock.now().toISOString());
      assert.equal(d.updatedAt, d.createdAt);
      assert.equal(Date.parse(d.expiresAt) - Date.parse(d.createdAt), 300_000, 'OTP_TTL_SECONDS');
    });

    it('maps type SEND_SMS to SMS', async () => {
      const d = await createVerification(h, await h.token(['otp:send']), { type: 'SEND_SMS' });
      assert.equal(d.type, 'SMS');
      assert.match(d.otp, /^\d{6}$/);
    });

    it('creates a DROPPED_CALL whose code is the last 4 digits of a caller id from CALLER_ID_RANGES', async () => {
      const token = await h.token(['otp:send']);
      const seen = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const d = await createVerification(h, token, { type: 'DROPPED_CALL' });
        assert.equal(d.type, 'DROPPED_CALL');
        assert.equal(d.status, 'PENDING');
        assert.match(d.otp, /^\d{4}$/);
        assert.match(d.pairedNumber, /^0812000\d{4}$/, 'local format of +2348120000000-+2348120009999');
        assert.equal(d.pairedNumber.slice(-4), d.otp);
        seen.add(d.pairedNumber);
      }
      assert.ok(seen.size > 1, 'caller ids are picked at random');
    });

    it('shows pairedNumber in local format to a number of its own country, in E.164 to another, and verifies a call with the form shown', async () => {
      const token = await h.token(['otp:send', 'otp:verify']);
      const uk = await createVerification(h, token, { countryCode: '+44', phoneNumber: '07400123459' });
      assert.equal(uk.pairedNumber, '07400123456', 'SMS_SENDER_NUMBER in local format to a UK number');
      const kenyan = await createVerification(h, token, { countryCode: '+254', phoneNumber: '0712345678' });
      assert.equal(kenyan.pairedNumber, '+447400123456', 'a UK sender to a Kenyan number: E.164');
      const nigerian = await createVerification(h, token, { type: 'DROPPED_CALL' });
      assert.match(nigerian.pairedNumber, /^0812000\d{4}$/, 'a Nigerian caller id to a Nigerian number: local format');
      for (const shownAs of [(e164: string) => e164, (e164: string) => `${e164.slice(0, 4)} ${e164.slice(4, 7)} ${e164.slice(7, 10)} ${e164.slice(10)}`]) {
        const call = await createVerification(h, token, { type: 'DROPPED_CALL', countryCode: '+254', phoneNumber: nextKenyan() });
        assert.match(call.pairedNumber, /^\+2348120000\d{3}$|^\+234812000\d{4}$/, 'a Nigerian caller id to a Kenyan number: E.164');
        assert.equal(call.pairedNumber.slice(-4), call.otp);
        const given = shownAs(call.pairedNumber);
        const res = await h.call('POST', '/v1/otp/verify', token, { id: call.id, otp: given });
        assert.equal(res.statusCode, 200, `verified with ${given}: ${res.body}`);
      }
    });

    it('echoes reference and webhookUrl', async () => {
      const d = await createVerification(h, await h.token(['otp:send']), {
        reference: 'order-42/é',
        webhookUrl: 'https://hooks.example.com/otp?tenant=7',
      });
      assert.equal(d.reference, 'order-42/é');
      assert.equal(d.webhookUrl, 'https://hooks.example.com/otp?tenant=7');
    });

    it('takes explicit nulls for reference and webhookUrl as absent', async () => {
      const d = await createVerification(h, await h.token(['otp:send']), { reference: null, webhookUrl: null });
      assert.equal(d.reference, null);
      assert.equal(d.webhookUrl, null);
    });

    it('accepts limits at their edge: reference of 256 characters, webhookUrl of 2048', async () => {
      const webhookUrl = `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`;
      assert.equal(webhookUrl.length, 2048);
      const d = await createVerification(h, await h.token(['otp:send']), { reference: 'r'.repeat(256), webhookUrl });
      assert.equal(d.reference?.length, 256);
      assert.equal(d.webhookUrl, webhookUrl);
    });

    it('parses numbers with and without the trunk prefix, and other countries, to E.164', async () => {
      const token = await h.token(['otp:send']);
      const cases: [string, string, string][] = [
        ['+234', '08031234001', '+2348031234001'],
        ['+234', '8031234002', '+2348031234002'],
        ['+44', '07400123456', '+447400123456'],
        ['+1', '2015550123', '+12015550123'],
      ];
      for (const [countryCode, phoneNumber, e164] of cases) {
        const d = await createVerification(h, token, { countryCode, phoneNumber });
        assert.equal(d.phoneNumber, e164);
        assert.equal(d.countryCode, countryCode);
        assert.equal(d.country, countryCode);
      }
    });

    it('takes a whole E.164 number with no countryCode, or with one that agrees (issue 17)', async () => {
      const token = await h.token(['otp:send']);
      const alone = await createVerification(h, token, { countryCode: undefined, phoneNumber: '+14155552671' });
      assert.equal(alone.phoneNumber, '+14155552671');
      assert.equal(alone.countryCode, '+1');
      const agreeing = await createVerification(h, token, { countryCode: '+234', phoneNumber: '+2348031234003' });
      assert.equal(agreeing.phoneNumber, '+2348031234003');
      assert.equal(agreeing.countryCode, '+234');
    });

    it('refuses an E.164 number whose country code disagrees, or that no calling code starts, with 400 INVALID_PHONE_NUMBER', async () => {
      const token = await h.token(['otp:send']);
      const other = expectV1Error(await create({ countryCode: '+44', phoneNumber: '+2348031234004' }, {}, token), 400, 'INVALID_PHONE_NUMBER');
      assert.match(other.error.details?.[0]?.issue ?? '', /country code \+234, not of countryCode \+44/);
      for (const phoneNumber of ['+999123456', '+2340', '+23408000']) {
        const res = await create({ phoneNumber }, {}, token);
        assert.deepEqual(detailFields(expectV1Error(res, 400, 'INVALID_PHONE_NUMBER')), ['phoneNumber'], phoneNumber);
      }
    });

    it('ignores unknown fields', async () => {
      const d = await createVerification(h, await h.token(['otp:send']), { extra: { a: [1] }, otp: '000000', status: 'SUCCESS' });
      assert.equal(d.status, 'PENDING');
      assert.notEqual(d.otp, '000000');
    });

    it('accepts a body just under 16 KiB', async () => {
      const res = await create({ countryCode: '+234', phoneNumber: nextLocalNumber(), pad: 'x'.repeat(16 * 1024 - 200) });
      assert.equal(res.statusCode, 200, res.body);
    });

    it('queues exactly one send job per verification, after the commit', async () => {
      const before = await sendCounts(h);
      const d = await createVerification(h, await h.token(['otp:send']));
      const afterCreate = await sendCounts(h);
      assert.equal(afterCreate.jobs, before.jobs + 1);
      const job = await h.services.db.db.selectFrom('send_jobs').selectAll().where('verification_id', '=', d.id).executeTakeFirstOrThrow();
      assert.equal(job.channel, 'sms');
      assert.equal(job.sender, '+447400123456');
    });
  });

  describe('idempotency', () => {
    it('replays the first response for the same key and body, and sends nothing new', async () => {
      const token = await h.token(['otp:send']);
      const body = { countryCode: '+234', phoneNumber: nextLocalNumber(), reference: 'idem' };
      const first = await create(body, { 'idempotency-key': 'key-1' }, token);
      assert.equal(first.statusCode, 200, first.body);
      await h.services.sendWorker.runOnce();
      const sent = await sendCounts(h);
      const second = await create(body, { 'idempotency-key': 'key-1' }, token);
      assert.equal(second.statusCode, 200, second.body);
      assert.deepEqual(second.json(), first.json());
      await h.services.sendWorker.runOnce();
      assert.deepEqual(await sendCounts(h), sent, 'no new message and no new job');
    });

    it('replays the response as first given, even after the verification moved on', async () => {
      const token = await h.token(['otp:send', 'otp:verify']);
      const body = { countryCode: '+234', phoneNumber: nextLocalNumber() };
      const first = await create(body, { 'idempotency-key': 'moved-on' }, token);
      const d = first.json().data as RecordBody;
      h.clock.advance(1000);
      const verified = await h.call('POST', '/v1/otp/verify', token, { id: d.id, otp: d.otp });
      assert.equal(verified.statusCode, 200);
      const again = await create(body, { 'idempotency-key': 'moved-on' }, token);
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), first.json());
    });

    it('answers the same key with another body with 409 IDEMPOTENCY_KEY_REUSED, sending nothing', async () => {
      const token = await h.token(['otp:send']);
      const first = await create({ countryCode: '+234', phoneNumber: nextLocalNumber() }, { 'idempotency-key': 'k2' }, token);
      assert.equal(first.statusCode, 200);
      const sent = await sendCounts(h);
      const other = await create({ countryCode: '+234', phoneNumber: nextLocalNumber() }, { 'idempotency-key': 'k2' }, token);
      expectV1Error(other, 409, 'IDEMPOTENCY_KEY_REUSED');
      const otherType = await create(
        { countryCode: '+234', phoneNumber: first.json().data.phoneNumber.replace('+234', '0'), type: 'DROPPED_CALL' },
        { 'idempotency-key': 'k2' },
        token,
      );
      expectV1Error(otherType, 409, 'IDEMPOTENCY_KEY_REUSED');
      assert.deepEqual(await sendCounts(h), sent);
    });

    it('keeps keys per client', async () => {
      const body = { countryCode: '+234', phoneNumber: nextLocalNumber() };
      const a = await create(body, { 'idempotency-key': 'shared' }, await h.token(['otp:send']));
      const b = await create(body, { 'idempotency-key': 'shared' }, await h.token(['otp:send']));
      assert.equal(a.statusCode, 200);
      assert.equal(b.statusCode, 200);
      assert.notEqual(a.json().data.id, b.json().data.id);
    });

    it('accepts a key of 255 characters and refuses 256 with 400 VALIDATION_ERROR', async () => {
      const token = await h.token(['otp:send']);
      const ok = await create({ countryCode: '+234', phoneNumber: nextLocalNumber() }, { 'idempotency-key': 'k'.repeat(255) }, token);
      assert.equal(ok.statusCode, 200, ok.body);
      const sent = await sendCounts(h);
      const long = await create({ countryCode: '+234', phoneNumber: nextLocalNumber() }, { 'idempotency-key': 'k'.repeat(256) }, token);
      const body = expectV1Error(long, 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(body), ['Idempotency-Key']);
      assert.deepEqual(await sendCounts(h), sent);
    });

    it('forgets a key after 24 hours', async () => {
      const c = await h.client(['otp:send']);
      const body = { countryCode: '+234', phoneNumber: nextLocalNumber() };
      const first = await create(body, { 'idempotency-key': 'day' }, await h.token(['otp:send'], c));
      assert.equal(first.statusCode, 200);
      h.clock.advance(24 * 3600 * 1000 + 1000);
      const later = await create(body, { 'idempotency-key': 'day' }, await h.token(['otp:send'], c));
      assert.equal(later.statusCode, 200, later.body);
      assert.notEqual(later.json().data.id, first.json().data.id, 'a new verification, not a replay');
    });
  });

  describe('error', () => {
    it('answers a number that is not valid for its country code with 400 INVALID_PHONE_NUMBER', async () => {
      const token = await h.token(['otp:send']);
      for (const [countryCode, phoneNumber] of [
        ['+234', '123'],
        ['+234', '0000000000'],
        ['+44', '08031234567'],
        ['+1', '0000000000'],
        ['+999', '12345678'],
        ['+234', '08031234567123'],
      ]) {
        const res = await create({ countryCode, phoneNumber }, {}, token);
        const body = expectV1Error(res, 400, 'INVALID_PHONE_NUMBER');
        assert.deepEqual(detailFields(body), ['phoneNumber'], `${countryCode} ${phoneNumber}`);
      }
    });

    it('names each missing field', async () => {
      const body = expectV1Error(await create({}), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(body), ['phoneNumber']);
      const localOnly = expectV1Error(await create({ phoneNumber: '08031234567' }), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(localOnly), ['countryCode']);
      assert.match(localOnly.error.details?.[0]?.issue ?? '', /required unless phoneNumber is a whole E\.164 number/);
      const onlyCode = expectV1Error(await create({ countryCode: '+234' }), 400, 'VALIDATION_ERROR');
      assert.deepEqual(detailFields(onlyCode), ['phoneNumber']);
    });

    it('names each ill-typed field', async () => {
      const body = expectV1Error(
        await create({ countryCode: 234, phoneNumber: 8031234567, type: 'EMAIL', webhookUrl: 5, reference: ['x'] }),
        400,
        'VALIDATION_ERROR',
      );
      assert.deepEqual(detailFields(body), ['countryCode', 'phoneNumber', 'reference', 'type', 'webhookUrl']);
      for (const d of body.error.details ?? []) assert.equal(typeof d.issue, 'string');
    });

    it('refuses malformed country codes and phone numbers', async () => {
      const token = await h.token(['otp:send']);
      for (const [countryCode, phoneNumber, field] of [
        ['234', '08031234567', 'countryCode'],
        ['+0234', '08031234567', 'countryCode'],
        ['+2345', '08031234567', 'countryCode'],
        ['+234', '++2348031234567', 'phoneNumber'],
        ['+234', '0803 123 4567', 'phoneNumber'],
        ['+234', '', 'phoneNumber'],
      ]) {
        const body = expectV1Error(await create({ countryCode, phoneNumber }, {}, token), 400, 'VALIDATION_ERROR');
        assert.deepEqual(detailFields(body), [field], `${countryCode} ${phoneNumber}`);
      }
    });

    it('refuses a webhookUrl that is not an absolute http(s) URL, has credentials or is too long', async () => {
      const token = await h.token(['otp:send']);
      for (const webhookUrl of [
        'ftp://hooks.example.com/x',
        'javascript:alert(1)',
        'not a url',
        '/relative/path',
        'https://user:pw@hooks.example.com/x',
        'https://user@hooks.example.com/x',
        `https://hooks.example.com/${'a'.repeat(2048)}`,
        'https://hooks.example.com/a\u0000b',
        'https://hooks.example.com/a b',
        '',
      ]) {
        const body = expectV1Error(await create({ countryCode: '+234', phoneNumber: nextLocalNumber(), webhookUrl }, {}, token), 400, 'VALIDATION_ERROR');
        assert.deepEqual(detailFields(body), ['webhookUrl'], webhookUrl.slice(0, 40));
      }
    });

    it('refuses a reference over 256 characters, with NUL, a lone surrogate or a leading U+FEFF', async () => {
      const token = await h.token(['otp:send']);
      for (const reference of ['r'.repeat(257), 'a\u0000b', 'a\uD800b', '\uDC00', '\uFEFFref']) {
        const body = expectV1Error(await create({ countryCode: '+234', phoneNumber: nextLocalNumber(), reference }, {}, token), 400, 'VALIDATION_ERROR');
        assert.deepEqual(detailFields(body), ['reference']);
      }
    });

    it('stores any other reference exactly as sent, on both databases', async () => {
      const token = await h.token(['otp:send', 'otp:verify']);
      const reference = 'ref \u{1F600} ü \uFEFF mid \t tab';
      const created = await create({ countryCode: '+234', phoneNumber: nextLocalNumber(), reference }, {}, token);
      assert.equal(created.statusCode, 200, created.body);
      const { id } = created.json().data as { id: string };
      const fetched = await h.call('GET', `/v1/otp/${id}`, token);
      assert.equal((fetched.json().data as { reference: string }).reference, reference);
    });

    it('answers malformed JSON and bodies that are not objects with 400 VALIDATION_ERROR', async () => {
      const token = await h.token(['otp:send']);
      for (const raw of ['{', '{"countryCode": "+234",}', '', 'null', '[1,2]', '"text"', '42', '{"__proto__": {"x": 1}}']) {
        const res = await h.call('POST', '/v1/otp/request', token, raw, { 'content-type': 'application/json' });
        expectV1Error(res, 400, 'VALIDATION_ERROR');
      }
    });

    it('answers a body that is not JSON with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const token = await h.token(['otp:send']);
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x', 'application/jsonx']) {
        const res = await h.call('POST', '/v1/otp/request', token, 'countryCode=%2B234&phoneNumber=08031234567', { 'content-type': contentType });
        expectV1Error(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
      const noType = await h.app.inject({
        method: 'POST',
        url: '/v1/otp/request',
        headers: { authorization: `Bearer ${token}` },
        payload: Buffer.from('{"countryCode":"+234","phoneNumber":"08031234567"}'),
      });
      expectV1Error(noType, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers a body over 16 KiB with 413 PAYLOAD_TOO_LARGE', async () => {
      const res = await create({ countryCode: '+234', phoneNumber: nextLocalNumber(), pad: 'x'.repeat(16 * 1024) });
      expectV1Error(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('answers a body over the limit with 413 in each other surface\'s own error shape', async () => {
      const c = await h.client(['otp:send', 'otp:verify', 'one-time-password-sms:send-validate']);
      const bearer = `Bearer ${await h.token(['one-time-password-sms:send-validate'], c)}`;
      const basic = `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}`;
      const big = 'x'.repeat(20 * 1024);
      const json = JSON.stringify({ padding: big });
      const form = 'application/x-www-form-urlencoded';
      const surfaces: [string, string, string, string | undefined, (body: unknown) => unknown][] = [
        ['/v2/Services/VA00000000000000000000000000000000/Verifications', form, `To=%2B2348030000000&Channel=sms&Padding=${big}`, basic, (b) => [(b as { code: number }).code, (b as { status: number }).status]],
        ['/one-time-password-sms/v1/send-code', 'application/json', json, bearer, (b) => [(b as { code: string }).code, (b as { status: number }).status]],
        [`/hooks/supabase/send-sms/${c.clientId}`, 'application/json', json, undefined, (b) => (b as { error: { http_code: number } }).error.http_code],
        [`/hooks/logto/sms/${c.clientId}`, 'application/json', json, undefined, (b) => (b as { code: string }).code],
        [`/hooks/kratos/sms/${c.clientId}`, 'application/json', json, undefined, (b) => (b as { code: string }).code],
        [`/hooks/zitadel/sms/${c.clientId}`, 'application/json', json, undefined, (b) => (b as { code: string }).code],
        ['/oauth/token', form, `grant_type=client_credentials&padding=${big}`, undefined, (b) => (b as { error: string }).error],
      ];
      const expected = [[20413, 413], ['PAYLOAD_TOO_LARGE', 413], 413, 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_LARGE', 'invalid_request'];
      for (const [i, [url, type, payload, authorization, shape]] of surfaces.entries()) {
        const res = await h.app.inject({ method: 'POST', url, headers: { 'content-type': type, ...(authorization && { authorization }) }, payload });
        assert.equal(res.statusCode, 413, `${url}: ${res.body}`);
        assert.deepEqual(shape(res.json()), expected[i], `${url}: ${res.body}`);
      }
    });

    it('answers an unknown route with 404 NOT_FOUND', async () => {
      const token = await h.token(['otp:send']);
      for (const [method, url] of [
        ['GET', '/v1/otp'],
        ['POST', '/v1/otp'],
        ['GET', '/v1/otp/request'.replace('request', '')],
        // /v2 is the Twilio-shaped surface (contract 15), whose unknown routes answer in Twilio's shape (twilio-verify.test.ts).
        ['POST', '/v3/otp/request'],
        ['GET', '/nothing-here'],
        ['PUT', '/v1/otp/request'],
        ['DELETE', '/v1/otp/00000000-0000-4000-8000-000000000000'],
        ['GET', '/v1/otp/%zz'],
      ] as const) {
        const res = await h.app.inject({ method, url, headers: { authorization: `Bearer ${token}` } });
        expectV1Error(res, 404, 'NOT_FOUND');
      }
    });

    it('stores nothing for a refused request', async () => {
      const token = await h.token(['otp:send']);
      const sent = await sendCounts(h);
      await create({ countryCode: '+234', phoneNumber: '123' }, {}, token);
      await create({ countryCode: '+234' }, {}, token);
      await create({ countryCode: '+234', phoneNumber: nextLocalNumber(), webhookUrl: 'ftp://x' }, {}, token);
      assert.deepEqual(await sendCounts(h), sent);
    });
  });
});
