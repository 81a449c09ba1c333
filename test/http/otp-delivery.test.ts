import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Outgoing, Provider, SendResult } from '../../src/channels/provider-port.js';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import type { ProviderStatus } from '../../src/admin/provider-status.js';
import { ChannelRegistry } from '../../src/channels/registry.js';
import { defaultClientSettings } from '../../src/domain/client-settings.js';
import { parseE164 } from '../../src/domain/phone.js';
import { CircuitBreaker } from '../../src/jobs/circuit-breaker.js';
import { SendWorker } from '../../src/jobs/send-worker.js';
import { SqlSendJobStore } from '../../src/store/send-job-store.js';
import { createVerification, e164Of, eventKinds, expectV1Error, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * A stand-in for an SMS gateway (none can run locally): it answers for the verifications it is told to,
 * and accepts every other message without recording it.
 */
class ScriptedSms implements Provider {
  // Stands in for the configured provider (SMS_PROVIDER=log), so that the failover order is the one configured.
  readonly name = 'log';
  readonly channels = ['sms'] as const;
  readonly attempts = new Map<string, number>();
  constructor(private readonly script: Map<string, (attempt: number) => SendResult>) {}

  start = async () => undefined;
  stop = async () => undefined;

  async send(message: Outgoing): Promise<SendResult> {
    const answer = this.script.get(message.verificationId);
    if (!answer) return { kind: 'accepted', messageId: 'ignored' };
    const attempt = (this.attempts.get(message.verificationId) ?? 0) + 1;
    this.attempts.set(message.verificationId, attempt);
    return answer(attempt);
  }
}

const [firstDelay, secondDelay] = [2, 10] as const;

interface SendErrorBody {
  code: string;
  message: string;
  at: string;
}

/** The record with what it says of its sends. */
interface Sent extends RecordBody {
  delivery: { channel: string; provider: string | null; status: string; sends: number; updatedAt: string; attempts: number; lastError: SendErrorBody | null };
  deliveries: { channel: string; provider: string; status: string; at: string; attempts: number; lastError: SendErrorBody | null; cost: string | null }[];
}

/** What a failed send shows of `delivery`. */
function pick(d: Sent['delivery']) {
  return { provider: d.provider, status: d.status, sends: d.sends, attempts: d.attempts, lastError: d.lastError };
}
const retryDelays = [firstDelay, secondDelay];

/** Contract 3.1 and 3.4: the code goes out through the channel's provider after commit; failures retry, then fail. */
forEachDatabase('sending codes', (kind) => {
  let h: Harness;
  before(async () => {
    // The queue path: the tests run the send worker by hand.
    h = await createHarness(kind, { env: { SEND_RETRY_DELAYS: retryDelays.join(','), OTP_TTL_SECONDS: '600' }, queuePath: true });
  });
  after(() => h.close());

  const messagesOf = (id: string) => h.services.messages.forVerification(id);
  const jobOf = (id: string) =>
    h.services.db.db.selectFrom('send_jobs').selectAll().where('verification_id', '=', id).executeTakeFirstOrThrow();

  function workerWith(sms: Provider) {
    const smsSender = parseE164(h.config.SMS_SENDER_NUMBER);
    assert.ok(smsSender);
    const channels = new ChannelRegistry({ smsSender, codeLength: h.config.OTP_LENGTH, callerIdRanges: h.config.CALLER_ID_RANGES });
    return new SendWorker({
      jobs: new SqlSendJobStore(h.services.db.db),
      findVerification: (id) => h.services.verificationStore.findById(id),
      recordOutcome: (job, provider, result) => h.services.deliveries.recordSendOutcome(job, provider, result),
      outgoing: async (channel, v, from, sendId) => channels.forChannel(channel).outgoing(v, from, sendId, defaultClientSettings),
      providers: (channel) => (channel === 'sms' ? [sms] : h.services.providers.forChannel(channel)),
      breaker: new CircuitBreaker(() => h.clock.now().getTime()),
      leaseMs: h.config.SEND_LEASE_MS,
      providerTimeoutMs: () => h.config.PROVIDER_TIMEOUT_MS,
      clock: h.clock,
      logger: pino({ level: 'silent' }),
    });
  }

  async function fresh(body: Record<string, unknown> = {}): Promise<{ token: string; v: RecordBody }> {
    const token = await h.token(['otp:send', 'otp:verify']);
    return { token, v: await createVerification(h, token, body) };
  }

  describe('happy', () => {
    it('sends the SMS with the code from SMS_SENDER_NUMBER, once', async () => {
      const { v } = await fresh();
      assert.deepEqual(await messagesOf(v.id), [], 'nothing is sent before the worker runs');
      await h.services.sendWorker.runOnce();
      const sent = await messagesOf(v.id);
      assert.equal(sent.length, 1);
      const [m] = sent;
      assert.ok(m);
      assert.equal(m.channel, 'sms');
      assert.equal(m.recipient, v.phoneNumber);
      assert.equal(m.sender, h.config.SMS_SENDER_NUMBER);
      assert.ok(m.body.includes(v.otp), m.body);
      assert.equal((await jobOf(v.id)).status, 'sent');
      await h.services.sendWorker.runOnce();
      assert.equal((await messagesOf(v.id)).length, 1, 'a sent job is not sent again');
    });

    it('places the dropped call from the caller id whose last 4 digits are the code', async () => {
      const { v } = await fresh({ type: 'DROPPED_CALL' });
      await h.services.sendWorker.runOnce();
      const [m, ...rest] = await messagesOf(v.id);
      assert.ok(m);
      assert.equal(rest.length, 0);
      assert.equal(m.channel, 'call');
      assert.equal(m.recipient, v.phoneNumber);
      assert.equal(m.sender, e164Of(v.pairedNumber), 'the caller id is the pairedNumber');
      assert.equal(m.sender.slice(-4), v.otp);
    });

    it('sends nothing for a verification that expired before its turn', async () => {
      const { v } = await fresh();
      h.clock.advance(600_000);
      await h.services.sendWorker.runOnce();
      assert.deepEqual(await messagesOf(v.id), []);
      assert.notEqual((await jobOf(v.id)).status, 'pending');
    });

    it('retries a transient failure and then delivers, leaving the verification PENDING', async () => {
      const { token, v } = await fresh();
      const sms = new ScriptedSms(new Map([[v.id, (n: number) => (n === 1 ? { kind: 'transient', reason: 'gateway 503' } : { kind: 'accepted', messageId: 'p-1' })]]));
      const worker = workerWith(sms);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 1);
      assert.equal((await jobOf(v.id)).last_error, 'gateway 503');
      // The failure shows on the record while its retry is pending: the provider tried, its calls, why.
      const failedAt = h.clock.now().toISOString();
      const lastError = { code: 'PROVIDER_UNAVAILABLE', message: 'gateway 503', at: failedAt };
      const pending = (await h.call('GET', `/v1/otp/${v.id}`, token)).json().data as Sent;
      assert.deepEqual(pick(pending.delivery), { provider: 'log', status: 'QUEUED', sends: 0, attempts: 1, lastError });
      assert.deepEqual(pending.deliveries, [{ channel: 'SMS', provider: 'log', status: 'QUEUED', at: failedAt, attempts: 1, lastError, cost: null }]);
      h.clock.advance(firstDelay * 1000);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 2);
      assert.equal((await jobOf(v.id)).status, 'sent');
      const res = await h.call('GET', `/v1/otp/${v.id}`, token);
      assert.equal(res.json().data.status, 'PENDING');
      const sent = res.json().data as Sent;
      assert.deepEqual(pick(sent.delivery), { provider: 'log', status: 'SENT', sends: 1, attempts: 2, lastError }, 'the turn that got it through keeps its last error');
      assert.deepEqual(sent.deliveries, [{ channel: 'SMS', provider: 'log', status: 'SENT', at: h.clock.now().toISOString(), attempts: 2, lastError, cost: null }]);
      assert.deepEqual(await eventKinds(h, v.id), []);
    });
  });

  describe('error', () => {
    it('fails the verification at once on a permanent provider failure, with one failed event', async () => {
      const { token, v } = await fresh();
      const sms = new ScriptedSms(new Map([[v.id, () => ({ kind: 'permanent', reason: 'number unreachable' })]]));
      await workerWith(sms).runOnce();
      assert.equal(sms.attempts.get(v.id), 1);
      const job = await jobOf(v.id);
      assert.equal(job.status, 'failed');
      assert.equal(job.last_error, 'number unreachable');
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
      const fetched = await h.call('GET', `/v1/otp/${v.id}`, token);
      assert.equal(fetched.json().data.status, 'FAILED');
      const lastError = { code: 'PROVIDER_REFUSED', message: 'number unreachable', at: h.clock.now().toISOString() };
      assert.deepEqual(pick(fetched.json().data.delivery as Sent['delivery']), { provider: 'log', status: 'FAILED', sends: 0, attempts: 1, lastError });
      assert.deepEqual((fetched.json().data as Sent).deliveries.map((d) => ({ status: d.status, attempts: d.attempts, lastError: d.lastError })), [
        { status: 'FAILED', attempts: 1, lastError },
      ]);
      const verify = expectV1Error(await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp }), 409, 'VERIFICATION_NOT_PENDING');
      assert.equal(verify.data?.status, 'FAILED');
    });

    it('retries transient failures after each of SEND_RETRY_DELAYS, then fails the verification', async () => {
      const { token, v } = await fresh();
      const sms = new ScriptedSms(new Map([[v.id, () => ({ kind: 'transient', reason: 'timeout' })]]));
      const worker = workerWith(sms);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 1);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 1, 'not before the first delay');
      h.clock.advance(firstDelay * 1000 - 1);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 1, 'still not');
      h.clock.advance(1);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 2);
      assert.equal((await h.call('GET', `/v1/otp/${v.id}`, token)).json().data.status, 'PENDING');
      h.clock.advance(secondDelay * 1000);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 3, 'one attempt per delay, plus the first');
      assert.equal((await jobOf(v.id)).status, 'failed');
      const failed = (await h.call('GET', `/v1/otp/${v.id}`, token)).json().data as Sent;
      assert.equal(failed.status, 'FAILED');
      const lastError = { code: 'PROVIDER_UNAVAILABLE', message: 'timeout', at: h.clock.now().toISOString() };
      assert.deepEqual(pick(failed.delivery), { provider: 'log', status: 'QUEUED', sends: 0, attempts: 3, lastError }, 'every call of the turn, the last error');
      assert.deepEqual(failed.deliveries.map((d) => ({ status: d.status, attempts: d.attempts, lastError: d.lastError })), [{ status: 'FAILED', attempts: 3, lastError }]);
      // The operator's view of the provider (otp-service providers): its failed calls of the last day, and why.
      const status = await runAdminCommand(adminDeps(h.services), { name: 'providers.status' });
      assert.ok(status.ok);
      const log = (status.value as ProviderStatus[]).find((p) => p.channel === 'sms' && p.provider === 'log');
      assert.ok(log && log.lastDay.failures >= 3, `failed calls counted: ${JSON.stringify(log?.lastDay)}`);
      assert.deepEqual(log.lastDay.lastError, lastError);
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
      h.clock.advance(3600_000);
      await worker.runOnce();
      assert.equal(sms.attempts.get(v.id), 3, 'a failed job is not retried');
    });

    it('treats a provider that throws as a transient failure', async () => {
      const { v } = await fresh();
      const sms = new ScriptedSms(
        new Map([
          [
            v.id,
            () => {
              throw new Error('socket hang up');
            },
          ],
        ]),
      );
      await workerWith(sms).runOnce();
      const job = await jobOf(v.id);
      assert.equal(job.status, 'pending');
      assert.match(job.last_error ?? '', /socket hang up/);
      assert.deepEqual(await eventKinds(h, v.id), []);
    });

    it('does not fail a verification that was verified while its send was failing', async () => {
      const { token, v } = await fresh();
      const sms = new ScriptedSms(new Map([[v.id, () => ({ kind: 'permanent', reason: 'late failure' })]]));
      assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp })).statusCode, 200);
      await workerWith(sms).runOnce();
      assert.equal((await h.call('GET', `/v1/otp/${v.id}`, token)).json().data.status, 'SUCCESS');
      assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
    });
  });
});
