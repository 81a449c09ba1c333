import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseE164 } from '../../src/domain/phone.js';
import { VerificationService } from '../../src/domain/verification-service.js';
import type { VerificationStore, VerificationTx } from '../../src/domain/verification-store.js';
import { cryptoRandom } from '../../src/domain/random.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { defaultClientSettings } from '../../src/domain/client-settings.js';
import { ChannelRegistry } from '../../src/channels/registry.js';
import { createVerification, detailFields, eventKinds, expectV1Error, isoMillis, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { signalPolicy } from '../../src/config.js';

const ttlMs = 60_000;
const maxAttempts = 3;

/** Contract 3.2-3.4: GET /v1/otp/{id}, POST /v1/otp/verify, the states and their events. */
forEachDatabase('fetch and verify', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { OTP_TTL_SECONDS: String(ttlMs / 1000), OTP_MAX_ATTEMPTS: String(maxAttempts) } });
  });
  after(() => h.close());

  /** A client with both scopes, its token, and a fresh verification of it. */
  async function fresh(body: Record<string, unknown> = {}): Promise<{ c: ClientCredentials; token: string; v: RecordBody }> {
    const c = await h.client(['otp:send', 'otp:verify']);
    const token = await h.token(['otp:send', 'otp:verify'], c);
    return { c, token, v: await createVerification(h, token, body) };
  }
  const fetchOne = (token: string, id: string) => h.call('GET', `/v1/otp/${id}`, token);
  const verify = (token: string, id: string, otp: unknown) => h.call('POST', '/v1/otp/verify', token, { id, otp });
  const wrongCode = (otp: string) => (otp === '000000' ? '111111' : '000000');
  const storedStatus = async (id: string) =>
    (await h.services.db.db.selectFrom('verifications').select(['status', 'counter']).where('id', '=', id).executeTakeFirstOrThrow());

  describe('fetch', () => {
    it('answers 200 with the record in the seed envelope', async () => {
      const { token, v } = await fresh({ reference: 'ref-1' });
      await h.services.sendWorker.idle();
      const res = await fetchOne(token, v.id);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.status, true);
      assert.equal(body.message, 'Verification fetched');
      // The code went out right after the create's answer: only the delivery has moved since.
      const { delivery, deliveries, ...rest } = body.data as Record<string, unknown> & {
        delivery: { status: string; provider: string; sends: number };
        deliveries: { channel: string; provider: string; status: string }[];
      };
      const { delivery: _created, deliveries: none, ...created } = v as unknown as Record<string, unknown>;
      assert.deepEqual(rest, created);
      assert.deepEqual(none, [], 'no attempt yet when the create answered');
      assert.deepEqual([delivery.status, delivery.provider, delivery.sends], ['SENT', 'log', 1]);
      assert.deepEqual(deliveries.map((d) => [d.channel, d.provider, d.status]), [['SMS', 'log', 'SENT']]);
    });

    it('works with a token that has only otp:verify', async () => {
      const { c, v } = await fresh();
      const res = await fetchOne(await h.token(['otp:verify'], c), v.id);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.id, v.id);
    });

    it('reads EXPIRED at once when the time is up, before any sweep', async () => {
      const { token, v } = await fresh();
      h.clock.advance(ttlMs - 1);
      assert.equal((await fetchOne(token, v.id)).json().data.status, 'PENDING', 'one millisecond before expiresAt');
      h.clock.advance(1);
      const res = await fetchOne(token, v.id);
      assert.equal(res.statusCode, 200);
      const d = res.json().data as RecordBody;
      assert.equal(d.status, 'EXPIRED');
      assert.equal(d.updatedAt, v.expiresAt);
      assert.match(d.updatedAt, isoMillis);
      assert.equal((await storedStatus(v.id)).status, 'PENDING', 'reading records nothing');
      assert.deepEqual(await eventKinds(h, v.id), []);
    });

    it('answers an unknown id with 404 NOT_FOUND', async () => {
      const { token } = await fresh();
      expectV1Error(await fetchOne(token, '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a'), 404, 'NOT_FOUND');
    });

    it('answers a malformed id like an unknown one (404)', async () => {
      const { token, v } = await fresh();
      for (const id of ['abc', '1', v.id.toUpperCase(), `{${v.id}}`, `${v.id}0`, v.id.replace(/-/g, ''), 'x'.repeat(90), "'; DROP TABLE verifications; --"]) {
        expectV1Error(await fetchOne(token, encodeURIComponent(id)), 404, 'NOT_FOUND');
      }
    });

    it("answers another client's id with 404 and nothing of its data", async () => {
      const { v } = await fresh();
      const other = await h.token(['otp:send', 'otp:verify']);
      const res = await fetchOne(other, v.id);
      expectV1Error(res, 404, 'NOT_FOUND');
      assert.ok(!res.body.includes(v.phoneNumber) && !res.body.includes(v.id));
    });
  });

  describe('verify: happy', () => {
    it('moves PENDING to SUCCESS on the right code, counting the attempt, with one success event', async () => {
      const { token, v } = await fresh();
      h.clock.advance(5_000);
      const res = await verify(token, v.id, v.otp);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.status, true);
      assert.equal(body.message, 'Verification successful');
      assert.equal(body.data.status, 'SUCCESS');
      assert.equal(body.data.counter, 1);
      assert.equal(body.data.updatedAt, h.clock.now().toISOString());
      assert.equal(body.data.createdAt, v.createdAt);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
      assert.equal((await fetchOne(token, v.id)).json().data.status, 'SUCCESS');
    });

    it('accepts the right code after wrong ones while attempts are left', async () => {
      const { token, v } = await fresh();
      for (let i = 1; i < maxAttempts; i++) assert.equal((await verify(token, v.id, wrongCode(v.otp))).statusCode, 422);
      const res = await verify(token, v.id, v.otp);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.counter, maxAttempts);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
    });

    it('verifies a DROPPED_CALL with the last 4 digits of the caller id', async () => {
      const { token, v } = await fresh({ type: 'DROPPED_CALL' });
      const res = await verify(token, v.id, v.pairedNumber.slice(-4));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.status, 'SUCCESS');
    });

    it('records the success event in the outbox with the webhook payload', async () => {
      const { token, v } = await fresh({ webhookUrl: 'https://hooks.example.com/otp', reference: 'r-9' });
      assert.equal((await verify(token, v.id, v.otp)).statusCode, 200);
      const row = await h.services.db.db.selectFrom('events').selectAll().where('verification_id', '=', v.id).executeTakeFirstOrThrow();
      assert.equal(row.kind, 'action.otp.success');
      assert.equal(row.webhook_url, 'https://hooks.example.com/otp');
      const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<string, unknown>;
      assert.deepEqual(payload, {
        event: 'action.otp.success',
        data: {
          id: v.id,
          otp: v.otp,
          type: 'SMS',
          status: 'SUCCESS',
          createdAt: v.createdAt,
          countryCode: v.countryCode,
          phoneNumber: v.phoneNumber,
          reference: 'r-9',
          failureReason: null,
        },
      });
    });
  });

  describe('verify: error', () => {
    it('answers a wrong code with 422 OTP_MISMATCH and the record, still PENDING, counter + 1, no event', async () => {
      const { token, v } = await fresh();
      const res = await verify(token, v.id, wrongCode(v.otp));
      const body = expectV1Error(res, 422, 'OTP_MISMATCH');
      assert.equal(body.data?.status, 'PENDING');
      assert.equal(body.data?.counter, 1);
      assert.equal(body.data?.id, v.id);
      assert.deepEqual(await eventKinds(h, v.id), []);
      const second = expectV1Error(await verify(token, v.id, `${v.otp}0`), 422, 'OTP_MISMATCH');
      assert.equal(second.data?.counter, 2, 'a code of another length is a mismatch too');
    });

    it('fails the verification on the last allowed wrong attempt (OTP_MAX_ATTEMPTS), with one failed event', async () => {
      const { token, v } = await fresh();
      for (let i = 1; i < maxAttempts; i++) {
        assert.equal(expectV1Error(await verify(token, v.id, wrongCode(v.otp)), 422, 'OTP_MISMATCH').data?.status, 'PENDING');
      }
      const last = expectV1Error(await verify(token, v.id, wrongCode(v.otp)), 422, 'OTP_MISMATCH');
      assert.equal(last.data?.status, 'FAILED');
      assert.equal(last.data?.counter, maxAttempts);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
      // Then it is no longer pending: even the right code is refused, and nothing more is counted or recorded.
      const after = expectV1Error(await verify(token, v.id, v.otp), 409, 'VERIFICATION_NOT_PENDING');
      assert.equal(after.data?.status, 'FAILED');
      assert.equal(after.data?.counter, maxAttempts);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
      assert.deepEqual(await storedStatus(v.id), { status: 'FAILED', counter: maxAttempts });
    });

    it('answers a verify after SUCCESS with 409 VERIFICATION_NOT_PENDING and the record', async () => {
      const { token, v } = await fresh();
      assert.equal((await verify(token, v.id, v.otp)).statusCode, 200);
      const again = expectV1Error(await verify(token, v.id, v.otp), 409, 'VERIFICATION_NOT_PENDING');
      assert.equal(again.data?.status, 'SUCCESS');
      assert.equal(again.data?.counter, 1);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
    });

    it('answers a verify after expiry with 409 and status EXPIRED, recording the expiry once', async () => {
      const { token, v } = await fresh();
      h.clock.advance(ttlMs);
      const res = expectV1Error(await verify(token, v.id, v.otp), 409, 'VERIFICATION_NOT_PENDING');
      assert.equal(res.data?.status, 'EXPIRED');
      assert.equal(res.data?.counter, 0, 'no attempt is counted on an expired verification');
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.expired']);
      assert.equal((await storedStatus(v.id)).status, 'EXPIRED');
      // The sweep and further verifies do not record it again.
      await h.services.verifications.expireDue();
      expectV1Error(await verify(token, v.id, v.otp), 409, 'VERIFICATION_NOT_PENDING');
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.expired']);
    });

    it("answers another client's id with 404, leaving it untouched", async () => {
      const { v } = await fresh();
      const other = await h.token(['otp:verify']);
      const res = expectV1Error(await verify(other, v.id, v.otp), 404, 'NOT_FOUND');
      assert.equal(res.data, undefined);
      assert.deepEqual(await storedStatus(v.id), { status: 'PENDING', counter: 0 });
    });

    it('answers a malformed or unknown id with 404', async () => {
      const { token, v } = await fresh();
      for (const id of ['abc', v.id.toUpperCase(), '6f1c3a52-8a43-4b8e-9d9c-0d5a3e1c2b7a', '']) {
        expectV1Error(await verify(token, id, v.otp), 404, 'NOT_FOUND');
      }
    });

    it('names each missing or ill-typed field with 400 VALIDATION_ERROR', async () => {
      const { token, v } = await fresh();
      assert.deepEqual(detailFields(expectV1Error(await h.call('POST', '/v1/otp/verify', token, {}), 400, 'VALIDATION_ERROR')), ['id', 'otp']);
      assert.deepEqual(detailFields(expectV1Error(await verify(token, v.id, Number(v.otp)), 400, 'VALIDATION_ERROR')), ['otp']);
      assert.deepEqual(
        detailFields(expectV1Error(await h.call('POST', '/v1/otp/verify', token, { id: 7, otp: null }), 400, 'VALIDATION_ERROR')),
        ['id', 'otp'],
      );
      expectV1Error(await verify(token, v.id, ''), 400, 'VALIDATION_ERROR');
      expectV1Error(await verify(token, v.id, '1'.repeat(65)), 400, 'VALIDATION_ERROR');
      expectV1Error(await h.call('POST', '/v1/otp/verify', token, '{"id":', { 'content-type': 'application/json' }), 400, 'VALIDATION_ERROR');
      expectV1Error(await h.call('POST', '/v1/otp/verify', token, 'id=1', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      assert.deepEqual(await storedStatus(v.id), { status: 'PENDING', counter: 0 }, 'refused requests count no attempt');
    });
  });

  describe('expiry sweep', () => {
    it('records EXPIRED with one event for due verifications only, and never twice', async () => {
      const { token, v: due } = await fresh();
      h.clock.advance(ttlMs / 2);
      const { v: notDue } = await fresh();
      h.clock.advance(ttlMs / 2);
      const moved = await h.services.verifications.expireDue();
      assert.ok(moved >= 1);
      assert.deepEqual(await storedStatus(due.id), { status: 'EXPIRED', counter: 0 });
      assert.deepEqual(await eventKinds(h, due.id), ['action.otp.expired']);
      assert.equal((await storedStatus(notDue.id)).status, 'PENDING');
      assert.deepEqual(await eventKinds(h, notDue.id), []);
      const fetched = (await fetchOne(token, due.id)).json().data as RecordBody;
      assert.equal(fetched.status, 'EXPIRED');
      assert.equal(fetched.updatedAt, due.expiresAt, 'recorded as of its expiry time');

      assert.equal(await h.services.verifications.expireDue(), 0, 'nothing left to move');
      h.clock.advance(ttlMs);
      await h.services.verifications.expireDue();
      assert.deepEqual(await eventKinds(h, due.id), ['action.otp.expired']);
      assert.deepEqual(await eventKinds(h, notDue.id), ['action.otp.expired']);
    });

    it('does not touch verifications that are no longer pending', async () => {
      const { token, v } = await fresh();
      assert.equal((await verify(token, v.id, v.otp)).statusCode, 200);
      h.clock.advance(ttlMs * 2);
      await h.services.verifications.expireDue();
      assert.equal((await storedStatus(v.id)).status, 'SUCCESS');
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
    });
  });

  describe('state change and event commit together', () => {
    /**
     * The service over a store whose outbox write fails, to show the state change rolls back with it. The
     * transactional path fails in code; the single-statement verify save fails in the database itself, by
     * reusing the id of an event that exists (a primary key violation inside the same statement).
     */
    async function serviceWithBrokenOutbox(): Promise<VerificationService> {
      const inner = h.services.verificationStore;
      const { token, v: other } = await fresh();
      assert.equal((await verify(token, other.id, other.otp)).statusCode, 200);
      const taken = await h.services.db.db
        .selectFrom('events')
        .select('id')
        .where('verification_id', '=', other.id)
        .executeTakeFirstOrThrow();
      const store: VerificationStore = {
        transaction: (script, keys) =>
          inner.transaction((tx) => {
            const broken: VerificationTx = Object.assign(Object.create(tx) as VerificationTx, {
              record: () => {
                throw new Error('outbox unavailable');
              },
            });
            return script(broken);
          }, keys),
        optimistic: (script, rounds) =>
          inner.optimistic(
            (tx) =>
              script({
                find: (clientId, id) => tx.find(clientId, id),
                save: (previous, next, events) => tx.save(previous, next, events.map((e) => ({ ...e, id: taken.id }))),
              }),
            rounds,
          ),
        recordSent: (sent) => inner.recordSent(sent),
        find: (clientId, id) => inner.find(clientId, id),
        findById: (id) => inner.findById(id),
        anyDue: (kind, now) => inner.anyDue(kind, now),
        readDue: (kind, now, limit) => inner.readDue(kind, now, limit),
        latestOfNumber: (clientId, phoneNumber) => inner.latestOfNumber(clientId, phoneNumber),
        parkedReceipts: (limit, message) => inner.parkedReceipts(limit, message),
      };
      const smsSender = parseE164(h.config.SMS_SENDER_NUMBER);
      assert.ok(smsSender);
      const channels = new ChannelRegistry({ smsSender, codeLength: h.config.OTP_LENGTH, callerIdRanges: h.config.CALLER_ID_RANGES });
      return new VerificationService({
        store,
        policy: {
          ttlSeconds: h.config.OTP_TTL_SECONDS,
          maxAttempts: h.config.OTP_MAX_ATTEMPTS,
          phoneLimit: {
            count: h.config.PHONE_LIMIT_COUNT,
            windowSeconds: h.config.PHONE_LIMIT_WINDOW_SECONDS,
            cooldownSeconds: h.config.PHONE_COOLDOWN_SECONDS,
          },
          resend: { maxSends: h.config.OTP_MAX_SENDS, cooldownSeconds: h.config.PHONE_COOLDOWN_SECONDS },
          destinations: { allowedCountries: h.config.ALLOWED_COUNTRIES, blockedLineTypes: h.config.BLOCKED_LINE_TYPES },
          fallbackTypes: channels.fallbackTypes(),
          fallbackAfterSeconds: h.config.FALLBACK_AFTER_SECONDS,
          clientDailySends: h.config.CLIENT_DAILY_SEND_LIMIT,
          newCountrySends: h.config.NEW_COUNTRY_LIMIT_COUNT,
          prefix: { count: h.config.PREFIX_LIMIT_COUNT, windowSeconds: h.config.PREFIX_LIMIT_WINDOW_SECONDS, blockSeconds: h.config.PREFIX_BLOCK_SECONDS },
      signals: signalPolicy(h.config),
          offered: new Set(['sms', 'call'] as const),
        },
        channels: (type) => channels.forRequest(type),
        afterCommit: h.services.dispatcher,
        clock: h.clock,
        random: cryptoRandom,
        clientSettings: async () => defaultClientSettings,
      });
    }

    it('leaves a verification PENDING when its success event cannot be written', async () => {
      const { c, v } = await fresh();
      await assert.rejects((await serviceWithBrokenOutbox()).verify(c.clientId, v.id, v.otp), /duplicate key/);
      assert.deepEqual(await storedStatus(v.id), { status: 'PENDING', counter: 0 });
      assert.deepEqual(await eventKinds(h, v.id), []);
    });

    it('leaves a verification PENDING when its failed event cannot be written', async () => {
      const { c, token, v } = await fresh();
      for (let i = 1; i < maxAttempts; i++) await verify(token, v.id, wrongCode(v.otp));
      await assert.rejects((await serviceWithBrokenOutbox()).verify(c.clientId, v.id, wrongCode(v.otp)), /duplicate key/);
      assert.deepEqual(await storedStatus(v.id), { status: 'PENDING', counter: maxAttempts - 1 });
    });

    it('leaves due verifications PENDING when the sweep cannot write their events', async () => {
      const { v } = await fresh();
      h.clock.advance(ttlMs);
      const broken = await serviceWithBrokenOutbox();
      await assert.rejects(broken.expireDue(), /outbox unavailable/);
      assert.equal((await storedStatus(v.id)).status, 'PENDING');
      assert.deepEqual(await eventKinds(h, v.id), []);
      await h.services.verifications.expireDue();
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.expired']);
    });
  });
});
