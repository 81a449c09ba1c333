import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { OtpServiceError, type OtpClient, type RetryNotice } from '../../client/src/index.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { eventually } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { codeOf, freshNumber, rejection, startClientTestService, type ClientTestService } from './service.js';

/**
 * Contract 12: every operation of the typed client against the service listening on 127.0.0.1 (over HTTP,
 * on both databases): each returns the record, each error is an OtpServiceError with the contract's status,
 * code, details and data; the cool-down's 429 is waited out for as long as Retry-After says.
 */

function serviceError(err: unknown, status: number, code: string): OtpServiceError {
  assert.ok(err instanceof OtpServiceError, `expected an OtpServiceError, got ${String(err)}`);
  assert.equal(err.status, status, err.message);
  assert.equal(err.code, code, err.message);
  return err;
}

forEachDatabase('typed client operations', (kind) => {
  let s: ClientTestService;
  let credentials: ClientCredentials;
  let client: OtpClient;
  before(async () => {
    s = await startClientTestService(kind, { PHONE_COOLDOWN_SECONDS: '1' });
    credentials = await s.register(['otp:send', 'otp:verify', 'lookup:request', 'lookup:status']);
    client = s.client(credentials);
  });
  after(() => s?.close());

  it('creates a verification and reads it back', async () => {
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber(), reference: 'signup-1' });
    assert.equal(created.status, 'PENDING');
    assert.equal(created.type, 'SMS');
    assert.equal(created.reference, 'signup-1');
    assert.match(created.phoneNumber, /^\+234805\d{7}$/);
    assert.equal(created.delivery.channel, 'SMS');
    const fetched = await client.getVerification(created.id);
    assert.equal(fetched.id, created.id);
    assert.equal(fetched.otp, created.otp);
    assert.equal(fetched.expiresAt, created.expiresAt);
  });

  it('repeats a create with the same idempotency key as the first one; another body is IDEMPOTENCY_KEY_REUSED', async () => {
    const key = `signup-${randomUUID()}`;
    const body = { countryCode: '+234', phoneNumber: freshNumber() };
    const first = await client.createVerification(body, { idempotencyKey: key });
    const again = await client.createVerification(body, { idempotencyKey: key });
    assert.equal(again.id, first.id);
    assert.equal(again.otp, first.otp);
    const other = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() }, { idempotencyKey: randomUUID() });
    assert.notEqual(other.id, first.id);
    const err = await rejection(() => client.createVerification({ ...body, reference: 'changed' }, { idempotencyKey: key }));
    serviceError(err, 409, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('verifies: a wrong code is OTP_MISMATCH with the record, the right one SUCCESS, then VERIFICATION_NOT_PENDING', async () => {
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const code = codeOf(created);
    const wrong = code === '000000' ? '111111' : '000000';
    const mismatch = serviceError(await rejection(() => client.verify(created.id, wrong)), 422, 'OTP_MISMATCH');
    assert.equal(mismatch.data?.id, created.id);
    assert.equal(mismatch.data?.status, 'PENDING');
    assert.equal(mismatch.data?.counter, 1);
    assert.deepEqual(mismatch.details, []);

    const verified = await client.verify(created.id, code);
    assert.equal(verified.status, 'SUCCESS');
    assert.equal(verified.counter, 2);

    const done = serviceError(await rejection(() => client.verify(created.id, code)), 409, 'VERIFICATION_NOT_PENDING');
    assert.equal(done.data?.status, 'SUCCESS');
  });

  it('waits out the cool-down\'s 429 on a resend for as long as Retry-After says, then resends', async () => {
    const notices: RetryNotice[] = [];
    const patient = s.client(credentials, { onRetry: (n) => notices.push(n) });
    const created = await patient.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const started = Date.now();
    const resent = await patient.resend(created.id);
    const waited = Date.now() - started;
    assert.equal(resent.id, created.id);
    assert.equal(resent.otp, created.otp);
    // The code goes out after the answer: the record counts the second send once it went.
    await eventually(async () => (await patient.getVerification(created.id)).delivery.sends === 2);
    assert.deepEqual(
      notices.map((n) => [n.reason, n.waitMs, n.method]),
      [['rate-limited', 1000, 'POST']],
    );
    assert.ok(waited >= 950, `resent after ${waited} ms, before the Retry-After second`);
    assert.ok(waited < 5000, `resent after ${waited} ms`);
  });

  it('throws RATE_LIMITED at once when Retry-After is beyond the longest wait allowed, or retries are off', async () => {
    for (const options of [{ maxRetryWaitSeconds: 0 }, { maxRetries: 0 }]) {
      // "At once": no retry was planned (onRetry is told before each wait), whatever the machine's speed.
      const notices: RetryNotice[] = [];
      const hasty = s.client(credentials, { ...options, onRetry: (n) => notices.push(n) });
      const created = await hasty.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
      const limited = serviceError(await rejection(() => hasty.resend(created.id)), 429, 'RATE_LIMITED');
      assert.equal(limited.retryAfterSeconds, 1);
      assert.deepEqual(notices, [], JSON.stringify(options));
    }
  });

  it('stops waiting for a Retry-After as soon as the caller aborts', async () => {
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('caller gave up')), 100);
    const err = await rejection(() => client.resend(created.id, { signal: controller.signal }));
    assert.ok(err instanceof Error);
    assert.equal(err.message, 'caller gave up');
    assert.ok(Date.now() - started < 900);
  });

  it('cancels: FAILED with CANCELED, then VERIFICATION_NOT_PENDING with the record', async () => {
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const canceled = await client.cancel(created.id);
    assert.equal(canceled.status, 'FAILED');
    assert.equal(canceled.failureReason, 'CANCELED');
    const again = serviceError(await rejection(() => client.cancel(created.id)), 409, 'VERIFICATION_NOT_PENDING');
    assert.equal(again.data?.failureReason, 'CANCELED');
    serviceError(await rejection(() => client.resend(created.id)), 409, 'VERIFICATION_NOT_PENDING');
  });

  it('answers NOT_FOUND for an unknown id, a malformed one and another client\'s, each without data', async () => {
    const other = await s.client(await s.register()).createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    // A slash in an id stays in the path parameter (percent-encoded), never reaching another route.
    for (const id of [randomUUID(), 'not-a-uuid', '../request', other.id]) {
      const missing = serviceError(await rejection(() => client.getVerification(id)), 404, 'NOT_FOUND');
      assert.equal(missing.data, undefined);
      serviceError(await rejection(() => client.cancel(id)), 404, 'NOT_FOUND');
    }
  });

  it('gives the fields a refused create names in details', async () => {
    const invalid = serviceError(await rejection(() => client.createVerification({ countryCode: '+234', phoneNumber: '12' })), 400, 'INVALID_PHONE_NUMBER');
    assert.equal(invalid.data, undefined);
    const malformed = serviceError(
      await rejection(() => client.createVerification({ countryCode: 'NG', phoneNumber: '0803 123 4567' })),
      400,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(malformed.details.map((d) => d.field).sort(), ['countryCode', 'phoneNumber']);
    assert.ok(malformed.details.every((d) => typeof d.issue === 'string'));
  });

  it('answers INSUFFICIENT_SCOPE to a token without the operation\'s scope', async () => {
    const verifier = s.client(await s.register(['otp:send', 'otp:verify']), { scopes: ['otp:verify'] });
    serviceError(await rejection(() => verifier.createVerification({ countryCode: '+234', phoneNumber: freshNumber() })), 403, 'INSUFFICIENT_SCOPE');
  });

  it('looks a number up and reads the lookup back; an invalid number is a lookup, not an error', async () => {
    const found = await client.lookup({ countryCode: '+234', phoneNumber: '08031234567' });
    assert.deepEqual(
      { status: found.status, phoneNumber: found.phoneNumber, regionCode: found.regionCode, valid: found.valid, lineType: found.lineType },
      { status: 'COMPLETED', phoneNumber: '+2348031234567', regionCode: 'NG', valid: true, lineType: 'MOBILE' },
    );
    assert.deepEqual(await client.getLookup(found.id), found);
    const invalid = await client.lookup({ countryCode: '+234', phoneNumber: '0803' });
    assert.equal(invalid.valid, false);
    assert.equal(invalid.lineType, 'UNKNOWN');
    serviceError(await rejection(() => client.getLookup(crypto.randomUUID())), 404, 'NOT_FOUND');
    const other = s.client(await s.register(['otp:send']));
    serviceError(await rejection(() => other.getLookup(found.id)), 403, 'INSUFFICIENT_SCOPE');
    serviceError(await rejection(() => other.lookup({ countryCode: '+234', phoneNumber: '08031234567' })), 403, 'INSUFFICIENT_SCOPE');
  });

  it('reads the webhook deliveries of a verification', async () => {
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    assert.deepEqual(await client.getWebhookDeliveries(created.id), []);
  });

  it("reads the client's stats, of the last 7 days or of the days asked for; a bad day is VALIDATION_ERROR", async () => {
    const mine = s.client(await s.register(['otp:send', 'otp:verify']));
    const created = await mine.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    await mine.verify(created.id, codeOf(created));
    await mine.createVerification({ countryCode: '+234', phoneNumber: freshNumber() });
    const today = s.clock.now().toISOString().slice(0, 10);
    const expected = [{ day: today, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 2, delivered: 0, verified: 1, cost: '0', costPerVerified: '0' }];
    assert.deepEqual(await mine.getStats(), expected);
    assert.deepEqual(await mine.getStats({ from: today, to: today }), expected);
    assert.deepEqual(await mine.getStats({ to: '2020-01-31' }), []);
    const bad = serviceError(await rejection(() => mine.getStats({ from: '2026-02-30' })), 400, 'VALIDATION_ERROR');
    assert.deepEqual(bad.details.map((d) => d.field), ['from']);
  });
});
