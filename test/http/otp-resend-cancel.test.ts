import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createVerification, e164Of, eventKinds, expectV1Error, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

interface Full extends RecordBody {
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
}

const cooldown = 30;
const maxSends = 3;

/** Contract 9: resend and cancel, by outcome (their security cases are in security.test.ts with every route). */
forEachDatabase('resend and cancel', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { PHONE_COOLDOWN_SECONDS: String(cooldown), OTP_MAX_SENDS: String(maxSends), OTP_TTL_SECONDS: '600' } });
  });
  after(() => h.close());

  const post = (token: string, path: string) => h.call('POST', path, token);
  const record = async (token: string, id: string): Promise<Full> => {
    await h.services.sendWorker.idle();
    return (await h.call('GET', `/v1/otp/${id}`, token)).json().data as Full;
  };
  const sent = async (id: string) => {
    await h.services.sendWorker.idle();
    return h.services.messages.forVerification(id);
  };

  describe('resend', () => {
    it('sends the same code again after the cool-down, answering "OTP resent" with the record', async () => {
      const token = await h.token();
      const v = await createVerification(h, token);
      assert.equal((await sent(v.id)).length, 1);
      h.clock.advance(cooldown * 1000);
      const res = await post(token, `/v1/otp/${v.id}/resend`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { status: boolean; message: string; data: Full };
      assert.equal(body.status, true);
      assert.equal(body.message, 'OTP resent');
      assert.equal(body.data.status, 'PENDING');
      assert.equal(body.data.otp, v.otp, 'the same code');
      const messages = await sent(v.id);
      assert.equal(messages.length, 2);
      assert.ok(messages.every((m) => m.body.includes(v.otp)));
      const r = await record(token, v.id);
      assert.deepEqual({ status: r.delivery.status, sends: r.delivery.sends, provider: r.delivery.provider }, { status: 'SENT', sends: 2, provider: 'log' });
      const verified = await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp });
      assert.equal(verified.statusCode, 200, verified.body);
    });

    it('calls again from the same caller id for a dropped call', async () => {
      const token = await h.token();
      const v = await createVerification(h, token, { type: 'DROPPED_CALL' });
      h.clock.advance(cooldown * 1000);
      assert.equal((await post(token, `/v1/otp/${v.id}/resend`)).statusCode, 200);
      const calls = await sent(v.id);
      assert.deepEqual(calls.map((c) => [c.channel, c.sender]), [['call', e164Of(v.pairedNumber)], ['call', e164Of(v.pairedNumber)]]);
    });

    it('answers 429 RATE_LIMITED with Retry-After within the cool-down, sending nothing', async () => {
      const token = await h.token();
      const v = await createVerification(h, token);
      h.clock.advance(10_000);
      const res = expectV1Error(await post(token, `/v1/otp/${v.id}/resend`), 429, 'RATE_LIMITED');
      assert.ok(res.message.length > 0);
      assert.deepEqual(res.error.details, [{ factor: 'repeated_attempts', rule: 'phone', mode: 'enforce' }]);
      const again = await post(token, `/v1/otp/${v.id}/resend`);
      assert.equal(again.headers['retry-after'], String(cooldown - 10));
      assert.equal((await sent(v.id)).length, 1);
      h.clock.advance((cooldown - 10) * 1000);
      assert.equal((await post(token, `/v1/otp/${v.id}/resend`)).statusCode, 200, 'allowed once the cool-down is over');
    });

    it(`allows at most OTP_MAX_SENDS (${maxSends}) sends, the first included`, async () => {
      const token = await h.token();
      const v = await createVerification(h, token);
      for (let i = 1; i < maxSends; i++) {
        h.clock.advance(cooldown * 1000);
        assert.equal((await post(token, `/v1/otp/${v.id}/resend`)).statusCode, 200);
      }
      h.clock.advance(cooldown * 1000);
      const res = await post(token, `/v1/otp/${v.id}/resend`);
      expectV1Error(res, 429, 'RATE_LIMITED');
      const left = 600 - maxSends * cooldown;
      assert.equal(res.headers['retry-after'], String(left), 'retry once this verification is over');
      assert.equal((await sent(v.id)).length, maxSends);
    });

    it('answers 409 VERIFICATION_NOT_PENDING with the record once it is verified or expired', async () => {
      const token = await h.token();
      const done = await createVerification(h, token);
      await h.call('POST', '/v1/otp/verify', token, { id: done.id, otp: done.otp });
      h.clock.advance(cooldown * 1000);
      const r1 = expectV1Error(await post(token, `/v1/otp/${done.id}/resend`), 409, 'VERIFICATION_NOT_PENDING');
      assert.equal(r1.data?.status, 'SUCCESS');
      const old = await createVerification(h, token);
      h.clock.advance(600_000);
      const r2 = expectV1Error(await post(token, `/v1/otp/${old.id}/resend`), 409, 'VERIFICATION_NOT_PENDING');
      assert.equal(r2.data?.status, 'EXPIRED');
      assert.deepEqual(await eventKinds(h, old.id), ['action.otp.expired'], 'the expiry it found is recorded once');
      assert.equal((await sent(old.id)).length, 1);
    });

    it('answers 404 for an unknown or malformed id', async () => {
      const token = await h.token();
      expectV1Error(await post(token, '/v1/otp/00000000-0000-4000-8000-000000000000/resend'), 404, 'NOT_FOUND');
      expectV1Error(await post(token, '/v1/otp/not-a-uuid/resend'), 404, 'NOT_FOUND');
    });
  });

  describe('cancel', () => {
    it('turns a PENDING verification FAILED with CANCELED and one action.otp.failed', async () => {
      const token = await h.token();
      const v = await createVerification(h, token, { webhookUrl: 'https://receiver.example.test/hooks' });
      const res = await post(token, `/v1/otp/${v.id}/cancel`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { message: string; data: Full };
      assert.equal(body.message, 'Verification cancelled');
      assert.deepEqual({ status: body.data.status, failureReason: body.data.failureReason }, { status: 'FAILED', failureReason: 'CANCELED' });
      const [event, ...more] = await h.services.webhooks.forVerification(v.id);
      assert.equal(more.length, 0);
      assert.equal(event?.kind, 'action.otp.failed');
      assert.equal((event?.payload as { data: { failureReason: string } }).data.failureReason, 'CANCELED');
    });

    it('leaves a cancelled verification unverifiable, unresendable and uncancellable (409 with the record)', async () => {
      const token = await h.token();
      const v = await createVerification(h, token);
      await post(token, `/v1/otp/${v.id}/cancel`);
      h.clock.advance(cooldown * 1000);
      for (const res of [
        await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp }),
        await post(token, `/v1/otp/${v.id}/resend`),
        await post(token, `/v1/otp/${v.id}/cancel`),
      ]) {
        const err = expectV1Error(res, 409, 'VERIFICATION_NOT_PENDING');
        assert.equal(err.data?.status, 'FAILED');
      }
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
    });

    it('sends nothing for a verification cancelled before its send', async () => {
      const queued = await createHarness(kind, { queuePath: true });
      try {
        const token = await queued.token();
        const v = await createVerification(queued, token);
        assert.equal((await queued.call('POST', `/v1/otp/${v.id}/cancel`, token)).statusCode, 200);
        await queued.services.sendWorker.runOnce();
        await queued.services.sendWorker.idle();
        assert.deepEqual(await queued.services.messages.forVerification(v.id), []);
      } finally {
        await queued.close();
      }
    });

    it('answers 404 for an unknown id', async () => {
      const token = await h.token();
      expectV1Error(await post(token, '/v1/otp/00000000-0000-4000-8000-000000000000/cancel'), 404, 'NOT_FOUND');
    });
  });

  describe('concurrency', () => {
    it('a cancel racing verifies: exactly one wins, and one event is recorded', async () => {
      const token = await h.token();
      const v = await createVerification(h, token);
      const answers = await Promise.all([
        post(token, `/v1/otp/${v.id}/cancel`),
        h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp }),
        h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp }),
      ]);
      assert.equal(answers.filter((a) => a.statusCode === 200).length, 1, answers.map((a) => a.statusCode).join());
      assert.equal((await eventKinds(h, v.id)).length, 1);
    });

    it('resends racing one another send the code once more, no more', async () => {
      const token = await h.token();
      const v = await createVerification(h, token);
      h.clock.advance(cooldown * 1000);
      const answers = await Promise.all(Array.from({ length: 5 }, () => post(token, `/v1/otp/${v.id}/resend`)));
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 429, 429, 429, 429]);
      assert.equal((await sent(v.id)).length, 2);
    });
  });
});
