import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { e164Of, nextLocalNumber } from '../support/api.js';
import { CamaraSpec } from '../support/camara-spec.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

const scope = 'one-time-password-sms:send-validate';
const maxAttempts = 3;
const ttlSeconds = 600;

/**
 * Contract 15, CAMARA one-time-password-sms v1: every request and answer validated against the published
 * description (1.1.1, kept in test/peers/camara), errors included.
 */
forEachDatabase('CAMARA one-time-password-sms', (kind) => {
  let h: Harness;
  const spec = new CamaraSpec();
  before(async () => {
    h = await createHarness(kind, {
      env: { OTP_MAX_ATTEMPTS: String(maxAttempts), OTP_TTL_SECONDS: String(ttlSeconds), PHONE_COOLDOWN_SECONDS: '30', ALLOWED_COUNTRIES: 'NG,GH' },
    });
  });
  after(() => h.close());

  /** Posts to the surface; the body must be valid per the description unless `invalid` says it is not. */
  const post = async (
    operation: '/send-code' | '/validate-code',
    token: string | null,
    body: Record<string, unknown>,
    options: { invalid?: boolean; correlator?: string } = {},
  ): Promise<LightMyRequestResponse> => {
    const problems = spec.requestProblems(operation, body);
    if (options.invalid) assert.ok(problems, `the description allows ${JSON.stringify(body)}`);
    else assert.equal(problems, null, JSON.stringify(body));
    const res = await h.app.inject({
      method: 'POST',
      url: `/one-time-password-sms/v1${operation}`,
      headers: { ...(token && { authorization: `Bearer ${token}` }), ...(options.correlator !== undefined && { 'x-correlator': options.correlator }) },
      payload: body,
    });
    spec.checkAnswer(operation, res.statusCode, res.body);
    return res;
  };
  const codeOf = async (id: string) => {
    await h.services.sendWorker.idle();
    const [message] = await h.services.messages.forVerification(id);
    assert.ok(message);
    return message;
  };
  const errorCode = (res: LightMyRequestResponse) => (res.json() as { code: string }).code;

  describe('send-code and validate-code', () => {
    it('sends the caller\'s own text with the code in it, echoes x-correlator, and validates with 204', async () => {
      const token = await h.token([scope, 'otp:send']);
      const phoneNumber = e164Of(nextLocalNumber());
      const message = '{{code}} is your short code to authenticate with Cool App via SMS';
      const sent = await post('/send-code', token, { phoneNumber, message }, { correlator: 'b4333c46-49c0-4f62-80d7-f0ef930f1c46' });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal(sent.headers['x-correlator'], 'b4333c46-49c0-4f62-80d7-f0ef930f1c46');
      const { authenticationId } = sent.json() as { authenticationId: string };
      const sms = await codeOf(authenticationId);
      const code = /^(\d{6}) is your short code/.exec(sms.body)?.[1];
      assert.ok(code, sms.body);
      assert.equal(sms.body, message.replace('{{code}}', code));
      // The same verification, through /v1.
      const v1 = await h.call('GET', `/v1/otp/${authenticationId}`, token);
      assert.equal((v1.json() as { data: { phoneNumber: string } }).data.phoneNumber, phoneNumber);

      const wrong = await post('/validate-code', token, { authenticationId, code: code === '000000' ? '111111' : '000000' }, { correlator: 'abc' });
      assert.deepEqual([wrong.statusCode, errorCode(wrong), wrong.headers['x-correlator']], [400, 'ONE_TIME_PASSWORD_SMS.INVALID_OTP', 'abc']);
      const right = await post('/validate-code', token, { authenticationId, code }, { correlator: 'abc' });
      assert.equal(right.statusCode, 204, right.body);
      assert.equal(right.headers['x-correlator'], 'abc');
      const again = await post('/validate-code', token, { authenticationId, code });
      assert.deepEqual([again.statusCode, errorCode(again)], [400, 'ONE_TIME_PASSWORD_SMS.VERIFICATION_EXPIRED']);
    });

    it('the last wrong attempt and every one after it are VERIFICATION_FAILED', async () => {
      const token = await h.token([scope]);
      const sent = await post('/send-code', token, { phoneNumber: e164Of(nextLocalNumber()), message: 'Code: {{code}}' });
      const { authenticationId } = sent.json() as { authenticationId: string };
      const code = /\d{6}/.exec((await codeOf(authenticationId)).body)?.[0] ?? '';
      const wrong = code === '000000' ? '111111' : '000000';
      for (let i = 1; i < maxAttempts; i++) assert.equal(errorCode(await post('/validate-code', token, { authenticationId, code: wrong })), 'ONE_TIME_PASSWORD_SMS.INVALID_OTP');
      assert.equal(errorCode(await post('/validate-code', token, { authenticationId, code: wrong })), 'ONE_TIME_PASSWORD_SMS.VERIFICATION_FAILED');
      assert.equal(errorCode(await post('/validate-code', token, { authenticationId, code })), 'ONE_TIME_PASSWORD_SMS.VERIFICATION_FAILED');
    });

    it('a code past its lifetime is VERIFICATION_EXPIRED; an unknown or another client\'s id is NOT_FOUND', async () => {
      const token = await h.token([scope]);
      const sent = await post('/send-code', token, { phoneNumber: e164Of(nextLocalNumber()), message: 'Code: {{code}}' });
      const { authenticationId } = sent.json() as { authenticationId: string };
      const code = /\d{6}/.exec((await codeOf(authenticationId)).body)?.[0] ?? '';
      const other = await h.token([scope]);
      const foreign = await post('/validate-code', other, { authenticationId, code });
      assert.deepEqual([foreign.statusCode, errorCode(foreign)], [404, 'NOT_FOUND']);
      const unknown = await post('/validate-code', token, { authenticationId: '00000000-0000-4000-8000-000000000000', code });
      assert.deepEqual([unknown.statusCode, errorCode(unknown)], [404, 'NOT_FOUND']);
      h.clock.advance(ttlSeconds * 1000 + 1000);
      const late = await post('/validate-code', token, { authenticationId, code });
      assert.deepEqual([late.statusCode, errorCode(late)], [400, 'ONE_TIME_PASSWORD_SMS.VERIFICATION_EXPIRED']);
    });
  });

  describe('errors', () => {
    it('a message without {{code}}, one over 160 characters, or a number not in E.164 is INVALID_ARGUMENT, and nothing is sent', async () => {
      const token = await h.token([scope]);
      const before = await h.services.db.db.selectFrom('verifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      for (const body of [
        { phoneNumber: e164Of(nextLocalNumber()), message: 'Your code is ready' },
        { phoneNumber: e164Of(nextLocalNumber()), message: `{{code}} ${'x'.repeat(160)}` },
        { phoneNumber: nextLocalNumber(), message: '{{code}}' },
        { phoneNumber: e164Of(nextLocalNumber()) },
      ]) {
        const res = await post('/send-code', token, body, { invalid: true });
        assert.deepEqual([res.statusCode, errorCode(res)], [400, 'INVALID_ARGUMENT'], JSON.stringify(body));
      }
      const afterCount = await h.services.db.db.selectFrom('verifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n));
    });

    it('a message the description allows that would go out in more than 3 SMS parts, or with a control character, is INVALID_ARGUMENT', async () => {
      const token = await h.token([scope]);
      const before = await h.services.db.db.selectFrom('verifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      // 150 emoji: within 160 characters, but 300 UCS-2 units, 5 parts.
      for (const [message, why] of [
        [`{{code}} ${'\u{1F600}'.repeat(150)}`, /5 SMS parts \(UCS-2\)/],
        [`{{code}}\u202E is your code`, /control or bidirectional/],
      ] as const) {
        const res = await post('/send-code', token, { phoneNumber: e164Of(nextLocalNumber()), message });
        assert.deepEqual([res.statusCode, errorCode(res)], [400, 'INVALID_ARGUMENT'], res.body);
        assert.match((res.json() as { message: string }).message, why);
      }
      const afterCount = await h.services.db.db.selectFrom('verifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n));
      const many = await post('/send-code', token, { phoneNumber: e164Of(nextLocalNumber()), message: '{{code}} '.repeat(17).trim() });
      assert.equal(many.statusCode, 200, 'seventeen codes of GSM-7 text fit in one part');
    });

    it('no token is UNAUTHENTICATED (401), a token without the scope PERMISSION_DENIED (403)', async () => {
      const body = { phoneNumber: e164Of(nextLocalNumber()), message: '{{code}}' };
      const none = await post('/send-code', null, body);
      assert.deepEqual([none.statusCode, errorCode(none)], [401, 'UNAUTHENTICATED']);
      const bad = await post('/send-code', 'not-a-token', body);
      assert.equal(bad.statusCode, 401);
      const otp = await post('/send-code', await h.token(['otp:send']), body);
      assert.deepEqual([otp.statusCode, errorCode(otp)], [403, 'PERMISSION_DENIED']);
      const validate = await post('/validate-code', await h.token(['otp:verify']), { authenticationId: '00000000-0000-4000-8000-000000000000', code: '123456' });
      assert.deepEqual([validate.statusCode, errorCode(validate)], [403, 'PERMISSION_DENIED']);
    });

    it('the phone limit is MAX_OTP_CODES_EXCEEDED, a refused country PHONE_NUMBER_NOT_ALLOWED (403)', async () => {
      const token = await h.token([scope]);
      const phoneNumber = e164Of(nextLocalNumber());
      assert.equal((await post('/send-code', token, { phoneNumber, message: '{{code}}' })).statusCode, 200);
      const again = await post('/send-code', token, { phoneNumber, message: '{{code}}' });
      assert.deepEqual([again.statusCode, errorCode(again)], [403, 'ONE_TIME_PASSWORD_SMS.MAX_OTP_CODES_EXCEEDED']);
      const us = await post('/send-code', token, { phoneNumber: '+14155550123', message: '{{code}}' });
      assert.deepEqual([us.statusCode, errorCode(us)], [403, 'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_NOT_ALLOWED']);
    });

    it('an x-correlator that does not match the description\'s pattern is INVALID_ARGUMENT', async () => {
      const token = await h.token([scope]);
      const res = await post('/send-code', token, { phoneNumber: e164Of(nextLocalNumber()), message: '{{code}}' }, { correlator: 'spaces are not allowed' });
      assert.deepEqual([res.statusCode, errorCode(res)], [400, 'INVALID_ARGUMENT']);
    });
  });
});
