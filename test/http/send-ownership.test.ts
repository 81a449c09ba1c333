import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import pino from 'pino';
import type { Provider } from '../../src/channels/provider-port.js';
import { ChannelRegistry } from '../../src/channels/registry.js';
import { defaultClientSettings } from '../../src/domain/client-settings.js';
import { parseE164 } from '../../src/domain/phone.js';
import { CircuitBreaker } from '../../src/jobs/circuit-breaker.js';
import { SendWorker } from '../../src/jobs/send-worker.js';
import { logProvider } from '../../src/providers/log.js';
import { SqlSendJobStore } from '../../src/store/send-job-store.js';
import { createVerification, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

interface Delivered extends RecordBody {
  delivery: { provider: string | null; status: string; sends: number };
}

/**
 * Contract 8: a send job is taken only by a process that has its provider configured. A process without the
 * provider settings (`otp-service worker` with only DATABASE_URL, so `log`) shares the database with one that
 * sends through a real gateway; the gateway refuses each code's first attempt (503), so the jobs come due again
 * for any worker. Before jobs named their provider, the `log` process took them and "sent" them (SENT through
 * `log`, nothing left the machine).
 */
forEachDatabase('send jobs go to a process with their provider', (kind) => {
  let gateway: Receiver;
  let h: Harness;
  const seen = new Set<string>();
  before(async () => {
    gateway = await startReceiver((req, res) => {
      const { verificationId } = JSON.parse(req.body) as { verificationId: string };
      if (!seen.has(verificationId)) {
        seen.add(verificationId);
        res.writeHead(503).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${verificationId}` }));
    });
    h = await createHarness(kind, {
      env: {
        SMS_PROVIDER: 'http',
        HTTP_GATEWAY_URL: gateway.url,
        HTTP_GATEWAY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
        PUBLIC_BASE_URL: 'https://otp.example.test',
        SEND_RETRY_DELAYS: '2,10',
      },
      queuePath: true,
    });
  });
  after(async () => {
    await h.close();
    await gateway.close();
  });

  /** A send worker on the same database with only the `log` provider (PGlite: one process holds the database). */
  function logOnlyWorker(): SendWorker {
    const smsSender = parseE164(h.config.SMS_SENDER_NUMBER);
    assert.ok(smsSender);
    const channels = new ChannelRegistry({ smsSender, codeLength: h.config.OTP_LENGTH, callerIdRanges: h.config.CALLER_ID_RANGES });
    const log: Provider = logProvider.create(
      {},
      {
        messageLog: h.services.messages,
        callbackUrl: null,
        callRingSeconds: 15,
        logger: pino({ level: 'silent' }),
        onReceipt: async () => undefined,
      },
    );
    return new SendWorker({
      jobs: new SqlSendJobStore(h.services.db.db),
      findVerification: (id) => h.services.verificationStore.findById(id),
      recordOutcome: (job, provider, result) => h.services.deliveries.recordSendOutcome(job, provider, result),
      outgoing: async (channel, v, from, sendId) => channels.forChannel(channel).outgoing(v, from, sendId, defaultClientSettings),
      providers: () => [log],
      breaker: new CircuitBreaker(() => h.clock.now().getTime()),
      leaseMs: h.config.SEND_LEASE_MS,
      providerTimeoutMs: () => h.config.PROVIDER_TIMEOUT_MS,
      clock: h.clock,
      logger: pino({ level: 'silent' }),
    });
  }

  it('leaves retried SMS jobs to the process with the gateway; the log-only one takes none', async () => {
    const token = await h.token();
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createVerification(h, token));
    await h.services.sendWorker.runOnce();
    assert.equal(gateway.requests.length, 5, 'each first attempt refused with 503');
    h.clock.advance(2_000);

    const logOnlyRun = async (run: () => Promise<unknown>) => {
      await run();
      await run();
    };
    if (kind === 'postgres') {
      // A second process's services with nothing but the database: `log` for both channels.
      await withSecondInstance(h, {}, async (other) => logOnlyRun(() => other.services.sendWorker.runOnce()));
    } else {
      const worker = logOnlyWorker();
      await logOnlyRun(() => worker.runOnce());
    }
    for (const v of created) assert.deepEqual(await h.services.messages.forVerification(v.id), [], 'nothing "sent" through log');
    const jobs = await h.services.db.db.selectFrom('send_jobs').select(['status', 'provider']).where('verification_id', 'in', created.map((v) => v.id)).execute();
    assert.deepEqual(jobs.map((j) => `${j.status} ${j.provider}`), created.map(() => 'pending http'));

    await h.services.sendWorker.runOnce();
    assert.equal(gateway.requests.length, 10, 'the retries went to the gateway');
    for (const v of created) {
      const r = (await h.call('GET', `/v1/otp/${v.id}`, token)).json() as { data: Delivered };
      assert.deepEqual(
        { provider: r.data.delivery.provider, status: r.data.delivery.status, sends: r.data.delivery.sends },
        { provider: 'http', status: 'SENT', sends: 1 },
      );
    }
  });
});
