import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import type { OutboxEvent } from '../../src/domain/events.js';
import { cryptoRandom } from '../../src/domain/random.js';
import { Workers } from '../../src/jobs/workers.js';
import { workerDeps } from '../../src/server.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { createServices, type Services } from '../../src/services.js';
import { SqlWebhookStore } from '../../src/store/webhook-store.js';
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { GuardedHttpClient } from '../../src/webhooks/guarded-client.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, succeedVerification, waitFor, webhookEnv, type Receiver } from './helpers.js';

const silent = pino({ level: 'silent' });

/** Outbox events for `clientId` to `url`, as a state change would record them. */
function outboxEvents(clientId: string, url: string, count: number, at: Date): OutboxEvent[] {
  return Array.from({ length: count }, () => {
    const verificationId = randomUUID();
    return {
      id: randomUUID(),
      clientId,
      verificationId,
      kind: 'action.otp.success',
      payload: {
        event: 'action.otp.success',
        data: {
          id: verificationId,
          otp: '123456',
          type: 'SMS',
          status: 'SUCCESS',
          createdAt: at.toISOString(),
          countryCode: '+234',
          phoneNumber: '+2348012345678',
          reference: null,
          failureReason: null,
        },
      },
      webhookUrl: url,
      createdAt: at,
      claimedUntil: null,
    };
  });
}

forEachDatabase('webhook workers', (kind) => {
  let h: Harness;
  let client: ClientCredentials;
  const closers: (() => Promise<void>)[] = [];
  before(async () => {
    h = await createHarness(kind, { env: webhookEnv, clock: new TestClock(Date.now()) });
    client = await h.client();
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
    await h.close();
  });
  const receiver = async (...args: Parameters<typeof startReceiver>): Promise<Receiver> => {
    const r = await startReceiver(...args);
    closers.push(() => r.close());
    return r;
  };
  /** Services of a second instance on the same database (PostgreSQL only: PGlite is one process). */
  const secondInstance = async (env: Record<string, string> = {}): Promise<Services> => {
    const config = loadConfig({ ...webhookEnv, LOG_LEVEL: 'silent', DATABASE_URL: h.config.DATABASE_URL ?? '', ...env });
    const services = await createServices(config, silent, h.clock, cryptoRandom);
    closers.push(async () => {
      await services.webhookWorker.close();
      await services.db.close();
    });
    return services;
  };

  it('two workers never send one attempt twice', async () => {
    const perId = new Map<string, number>();
    const r = await receiver(async (req, res) => {
      const id = String(req.headers['webhook-id']);
      perId.set(id, (perId.get(id) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 15)));
      res.writeHead(204).end();
    });
    const total = 60;
    const events = outboxEvents(client.clientId, r.url, total, h.clock.now());
    await h.services.verificationStore.transaction(async (tx) => tx.record(events));
    // On PostgreSQL the second worker is another instance with its own connections; PGlite is one process.
    const otherStore = kind === 'postgres' ? (await secondInstance()).webhooks : new SqlWebhookStore(h.services.db.db, false);
    const workerOf = (outbox: SqlWebhookStore) => {
      const http = new GuardedHttpClient({ timeoutMs: 5000, allowPrivateNetworks: true });
      closers.push(() => http.close());
      return new DeliveryWorker({
        outbox,
        http,
        retryDelays: [5],
        leaseMs: 30_000,
        concurrency: 7,
        pollIntervalMs: 1000,
        clock: h.clock,
        random: cryptoRandom,
        logger: silent,
        secretsOf: async () => ({ current: client.webhookSecret, previous: null, previousExpiresAt: null }),
      });
    };
    const workers = [workerOf(h.services.webhooks), workerOf(otherStore)];
    await waitFor(
      'every event to be delivered',
      async () => {
        await Promise.all(workers.map((w) => w.runOnce()));
        const rows = await h.services.db.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('id', 'in', events.map((e) => e.id))
          .where('delivery_status', '=', 'delivered')
          .executeTakeFirstOrThrow();
        return Number(rows.n) === total;
      },
      30_000,
    );
    await Promise.all(workers.map((w) => w.idle()));
    assert.equal(r.requests.length, total);
    assert.equal(perId.size, total);
    assert.ok([...perId.values()].every((n) => n === 1));
    const attempts = await h.services.db.db
      .selectFrom('webhook_attempts')
      .select(['event_id', 'attempt', 'outcome'])
      .where('event_id', 'in', events.map((e) => e.id))
      .execute();
    assert.equal(attempts.length, total);
    assert.ok(attempts.every((a) => a.attempt === 1 && a.outcome === 'delivered'));
  });

  it('a lease that runs out hands the event to the next worker; the lost attempt is recorded', async () => {
    const store = h.services.webhooks;
    const [event] = outboxEvents(client.clientId, 'http://127.0.0.1:9/never', 1, h.clock.now());
    assert.ok(event);
    await h.services.verificationStore.transaction(async (tx) => tx.record([event]));
    const claim = async () => (await store.claimDue(h.clock.now(), 1000, 100)).filter((e) => e.id === event.id);
    const [first] = await claim();
    assert.equal(first?.attempt, 1);
    assert.deepEqual(await claim(), [], 'held while the lease runs');
    h.clock.advance(999);
    assert.deepEqual(await claim(), [], 'still held');
    h.clock.advance(1);
    const [second] = await claim();
    assert.equal(second?.attempt, 2);
    let shown = await store.show(event.id);
    assert.deepEqual(
      shown?.attemptLog.map((a) => [a.attempt, a.outcome]),
      [[1, 'interrupted']],
    );
    // The first worker comes back late: its attempt is recorded, the event (now the second's) is left alone.
    const late = await store.recordAttempt(
      {
        eventId: event.id,
        attempt: 1,
        attemptedAt: h.clock.now(),
        webhookUrl: event.webhookUrl ?? '',
        durationMs: 5,
        statusCode: 200,
        error: null,
        next: { kind: 'delivered' },
      },
      h.clock.now(),
    );
    assert.equal(late, false);
    shown = await store.show(event.id);
    assert.equal(shown?.deliveryStatus, 'pending');
    assert.deepEqual(
      shown?.attemptLog.map((a) => [a.attempt, a.outcome, a.statusCode]),
      [[1, 'delivered', 200]],
    );
    const current = await store.recordAttempt(
      {
        eventId: event.id,
        attempt: 2,
        attemptedAt: h.clock.now(),
        webhookUrl: event.webhookUrl ?? '',
        durationMs: 5,
        statusCode: 204,
        error: null,
        next: { kind: 'delivered' },
      },
      h.clock.now(),
    );
    assert.equal(current, true);
    shown = await store.show(event.id);
    assert.equal(shown?.deliveryStatus, 'delivered');
    assert.equal(shown?.leaseUntil, null);
  });

  it('starts delivering within moments of the commit, without waiting for the poll', async () => {
    const services = kind === 'postgres' ? await secondInstance({ WEBHOOK_POLL_INTERVAL_MS: '600000' }) : null;
    // PGlite: the harness's own services, woken in-process by the commit.
    const target = services ?? h.services;
    const workers = new Workers(workerDeps(target, true));
    await workers.start();
    closers.push(() => workers.stop());
    const r = await receiver();
    const token = await h.token(undefined, client);
    if (kind === 'postgres') {
      // The other instance hears the commit through LISTEN/NOTIFY once its listener is up.
      await waitFor('the listener', async () => (await listeners(h)) === 1);
    }
    // The poll interval is 10 minutes: only a wake-up can deliver these in time.
    const first = await succeedVerification(h, token, r.url);
    await waitFor('the first delivery', () => r.requests.length === 1, 5000);
    await waitFor('it to be recorded', async () => (await target.webhooks.forVerification(first.id))[0]?.deliveryStatus === 'delivered');
    await succeedVerification(h, token, r.url);
    await waitFor('the second delivery', () => r.requests.length === 2, 5000);
    if (kind === 'postgres') {
      // A lost LISTEN connection is replaced, and deliveries keep starting at once.
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%LISTEN otp_webhooks%' AND pid <> pg_backend_pid() AND datname = current_database()`.execute(
        h.services.db.db,
      );
      await waitFor('the listener to come back', async () => (await listeners(h)) === 1, 10_000);
      await succeedVerification(h, token, r.url);
      await waitFor('the delivery after the reconnect', () => r.requests.length === 3, 5000);
    }
  });
});

/** Sessions listening on the webhook channel in this database. */
async function listeners(h: Harness): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE query LIKE '%LISTEN otp_webhooks%' AND datname = current_database() AND state = 'idle'`.execute(h.services.db.db);
  return rows[0]?.n ?? 0;
}
