import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import type { WebhookEventWithAttempts } from '../../src/domain/webhook-delivery.js';
import type { LookupAll } from '../../src/webhooks/address-guard.js';
import { expectV1Error } from '../support/api.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { deliverDue, startReceiver, succeedVerification, verifySignature, waitFor, webhookEnv, type Receiver } from './helpers.js';

forEachDatabase('webhook delivery', (kind) => {
  let h: Harness;
  let client: ClientCredentials;
  let token: string;
  const receivers: Receiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  before(async () => {
    h = await createHarness(kind, { env: webhookEnv, clock: new TestClock(Date.now()) });
    client = await h.client();
    token = await h.token(undefined, client);
  });
  after(async () => {
    await h.close();
    await Promise.all(receivers.map((r) => r.close()));
  });
  const eventsOf = (verificationId: string) => h.services.webhooks.forVerification(verificationId);
  const onlyEvent = async (verificationId: string): Promise<WebhookEventWithAttempts> => {
    const [event, ...rest] = await eventsOf(verificationId);
    assert.ok(event, 'an event was recorded');
    assert.equal(rest.length, 0);
    return event;
  };

  it('delivers a 2xx with Standard Webhooks headers and the contract body', async () => {
    const r = await receiver((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    const { id } = await succeedVerification(h, token, `${r.url}?tenant=7`);
    await deliverDue(h);
    assert.equal(r.requests.length, 1);
    const [req] = r.requests;
    assert.ok(req);
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/hooks?tenant=7');
    assert.match(String(req.headers['content-type']), /^application\/json/);
    const event = await onlyEvent(id);
    assert.equal(req.headers['webhook-id'], event.id);
    assert.ok(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000) < 300);
    const body = verifySignature(client.webhookSecret, req) as { event: string; data: Record<string, unknown> };
    assert.equal(body.event, 'action.otp.success');
    assert.deepEqual(Object.keys(body), ['event', 'data']);
    assert.deepEqual(Object.keys(body.data), ['id', 'otp', 'type', 'status', 'createdAt', 'countryCode', 'phoneNumber', 'reference', 'failureReason']);
    assert.equal(body.data.id, id);
    assert.equal(body.data.status, 'SUCCESS');
    assert.equal(body.data.type, 'SMS');
    assert.equal(body.data.reference, null);
    assert.equal(event.deliveryStatus, 'delivered');
    assert.equal(event.attempts, 1);
    assert.equal(event.nextAttemptAt, null);
    assert.equal(event.leaseUntil, null);
    assert.ok(event.deliveredAt);
    assert.equal(event.attemptLog.length, 1);
    const [attempt] = event.attemptLog;
    assert.equal(attempt?.outcome, 'delivered');
    assert.equal(attempt?.statusCode, 200);
    assert.equal(attempt?.error, null);
    assert.ok((attempt?.durationMs ?? -1) >= 0);
  });

  it('retries a 500 on schedule with the same webhook-id and a fresh signature', async () => {
    const r = await receiver((_req, res, i) => void res.writeHead(i === 0 ? 500 : 204).end());
    const { id } = await succeedVerification(h, token, r.url);
    await deliverDue(h);
    let event = await onlyEvent(id);
    assert.equal(event.deliveryStatus, 'pending');
    assert.equal(event.lastError, 'HTTP 500');
    const first = event.attemptLog[0];
    assert.equal(first?.outcome, 'failed');
    assert.equal(first?.statusCode, 500);
    // 5 s ± 20%
    const wait = (event.nextAttemptAt?.getTime() ?? 0) - h.clock.now().getTime();
    assert.ok(wait >= 4000 && wait <= 6000, `retry in ${wait} ms`);
    assert.equal(first?.nextAttemptAt?.getTime(), event.nextAttemptAt?.getTime());
    await deliverDue(h);
    assert.equal(r.requests.length, 1, 'not due yet');
    h.clock.advance(6001);
    await deliverDue(h);
    assert.equal(r.requests.length, 2);
    event = await onlyEvent(id);
    assert.equal(event.deliveryStatus, 'delivered');
    assert.deepEqual(
      event.attemptLog.map((a) => [a.attempt, a.outcome, a.statusCode]),
      [
        [1, 'failed', 500],
        [2, 'delivered', 204],
      ],
    );
    const [a, b] = r.requests;
    assert.ok(a && b);
    assert.equal(a.headers['webhook-id'], event.id);
    assert.equal(b.headers['webhook-id'], event.id);
    assert.ok(Number(b.headers['webhook-timestamp']) > Number(a.headers['webhook-timestamp']));
    assert.notEqual(a.headers['webhook-signature'], b.headers['webhook-signature']);
    assert.equal(a.body, b.body);
    verifySignature(client.webhookSecret, a);
    verifySignature(client.webhookSecret, b);
  });

  it('gives up on a receiver that does not answer in time, and retries later', async () => {
    const held: http.ServerResponse[] = [];
    const r = await receiver((_req, res) => {
      held.push(res);
    });
    const { id } = await succeedVerification(h, token, r.url);
    await deliverDue(h);
    const event = await onlyEvent(id);
    assert.equal(r.requests.length, 1);
    assert.equal(event.deliveryStatus, 'pending');
    const attempt = event.attemptLog[0];
    assert.equal(attempt?.statusCode, null);
    assert.match(attempt?.error ?? '', /^timeout: no answer within 1000 ms$/);
    const duration = attempt?.durationMs ?? 0;
    assert.ok(duration >= 900 && duration < 10_000, `took ${duration} ms`);
    assert.ok(event.nextAttemptAt);
  });

  it('lets a slow receiver answer without holding up other deliveries', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await receiver(async (_req, res) => {
      await gate;
      res.writeHead(202).end();
    });
    const fast = await receiver();
    const slowOne = await succeedVerification(h, token, slow.url);
    await h.services.webhookWorker.runOnce();
    await waitFor('the slow receiver to get its request', () => slow.requests.length === 1);
    const fastOne = await succeedVerification(h, token, fast.url);
    await h.services.webhookWorker.runOnce();
    await waitFor('the fast receiver to get its request', () => fast.requests.length === 1);
    await waitFor('the fast delivery to be recorded', async () => (await onlyEvent(fastOne.id)).deliveryStatus === 'delivered');
    const inFlight = await onlyEvent(slowOne.id);
    assert.equal(inFlight.deliveryStatus, 'pending');
    assert.ok(inFlight.leaseUntil, 'the slow one is still in flight');
    const listed = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.list', status: 'pending', verificationId: slowOne.id, limit: 10 });
    assert.deepEqual(listed.ok && (listed.value as { inFlight: boolean }[]).map((e) => e.inFlight), [true]);
    const replayWhileInFlight = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.replay', id: inFlight.id });
    assert.equal(replayWhileInFlight.ok, false);
    assert.match(replayWhileInFlight.ok ? '' : replayWhileInFlight.error, /being delivered now/);
    release();
    await h.services.webhookWorker.idle();
    const done = await onlyEvent(slowOne.id);
    assert.equal(done.deliveryStatus, 'delivered');
    assert.equal(done.attemptLog[0]?.statusCode, 202);
  });

  it('does not follow a redirect: the 3xx is a failed attempt', async () => {
    const target = await receiver();
    const r = await receiver((_req, res) => void res.writeHead(302, { location: target.url }).end());
    const { id } = await succeedVerification(h, token, r.url);
    await deliverDue(h);
    const event = await onlyEvent(id);
    assert.equal(r.requests.length, 1);
    assert.equal(target.requests.length, 0);
    assert.equal(event.deliveryStatus, 'pending');
    assert.equal(event.attemptLog[0]?.statusCode, 302);
    assert.equal(event.attemptLog[0]?.error, 'redirects are not followed');
  });

  it('records a refused connection and retries', async () => {
    const gone = await startReceiver();
    const url = gone.url;
    await gone.close();
    const { id } = await succeedVerification(h, token, url);
    await deliverDue(h);
    const event = await onlyEvent(id);
    assert.equal(event.deliveryStatus, 'pending');
    assert.equal(event.attemptLog[0]?.statusCode, null);
    assert.match(event.attemptLog[0]?.error ?? '', /ECONNREFUSED/);
    assert.ok(event.nextAttemptAt);
  });

  it('reads a large response body only up to the cap and still counts the 2xx', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let sent = 0;
      const pump = () => {
        while (sent < 400 && res.write(chunk)) sent += 1;
        if (sent < 400) res.once('drain', pump);
        else res.end();
      };
      res.on('error', () => undefined);
      pump();
    });
    const { id } = await succeedVerification(h, token, r.url);
    await deliverDue(h);
    assert.equal((await onlyEvent(id)).deliveryStatus, 'delivered');
  });

  it('honours Retry-After on a 503, up to twice the scheduled delay', async () => {
    const r = await receiver((_req, res, i) => void res.writeHead(503, { 'retry-after': i === 0 ? '7' : '999' }).end());
    const { id } = await succeedVerification(h, token, r.url);
    await deliverDue(h);
    let event = await onlyEvent(id);
    assert.equal((event.nextAttemptAt?.getTime() ?? 0) - h.clock.now().getTime(), 7000);
    h.clock.advance(7000);
    await deliverDue(h);
    event = await onlyEvent(id);
    // The second retry is scheduled 300 s out: 999 s is cut to 600 s.
    assert.equal((event.nextAttemptAt?.getTime() ?? 0) - h.clock.now().getTime(), 600_000);
  });

  it('signs with both secrets during a rotation, then with the new one only', async () => {
    const c = await h.client();
    const t = await h.token(undefined, c);
    const r = await receiver();
    const rotated = await runAdminCommand(adminDeps(h.services), { name: 'clients.rotate-webhook-secret', id: c.clientId });
    assert.ok(rotated.ok);
    const newSecret = (rotated.value as { webhookSecret: string }).webhookSecret;
    assert.notEqual(newSecret, c.webhookSecret);
    await succeedVerification(h, t, r.url);
    await deliverDue(h);
    const during = r.requests[0];
    assert.ok(during);
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
    verifySignature(c.webhookSecret, during);
    verifySignature(newSecret, during);
    // 24 hours later (the overlap is stored as an expiry time; move it instead of the clock, which the
    // receiver's timestamp check reads against the real time).
    await sql`UPDATE clients SET previous_webhook_secret_expires_at = ${new Date(h.clock.now().getTime() - 1000)} WHERE id = ${c.clientId}`.execute(
      h.services.db.db,
    );
    // Secrets come from the client directory's cache; a change made behind the service's back is read on its next load.
    h.services.clientDirectory.forget(c.clientId);
    await succeedVerification(h, t, r.url);
    await deliverDue(h);
    const afterOverlap = r.requests[1];
    assert.ok(afterOverlap);
    assert.equal(String(afterOverlap.headers['webhook-signature']).split(' ').length, 1);
    verifySignature(newSecret, afterOverlap);
    assert.throws(() => verifySignature(c.webhookSecret, afterOverlap), /No matching signature/);
  });

  it('serves the delivery log at GET /v1/otp/{id}/webhooks to its own client only', async () => {
    const r = await receiver((_req, res, i) => void res.writeHead(i === 0 ? 500 : 200).end());
    const { id } = await succeedVerification(h, token, r.url);
    await deliverDue(h);
    h.clock.advance(7000);
    await deliverDue(h);
    const res = await h.call('GET', `/v1/otp/${id}/webhooks`, token);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { status: boolean; message: string; data: Record<string, unknown>[] };
    assert.equal(body.status, true);
    assert.equal(body.message, 'Webhook deliveries fetched');
    assert.equal(body.data.length, 1);
    const [delivery] = body.data;
    assert.ok(delivery);
    assert.equal(delivery.id, r.requests[0]?.headers['webhook-id']);
    assert.equal(delivery.event, 'action.otp.success');
    assert.equal(delivery.verificationId, id);
    assert.equal(delivery.deliveryStatus, 'delivered');
    assert.equal(delivery.attemptCount, 2);
    assert.equal(delivery.inFlight, false);
    assert.deepEqual(
      (delivery.attempts as Record<string, unknown>[]).map((a) => [a.attempt, a.outcome, a.statusCode, a.error]),
      [
        [1, 'failed', 500, null],
        [2, 'delivered', 200, null],
      ],
    );
    assert.equal('clientId' in delivery, false);
    assert.equal('payload' in delivery, false);
    assert.equal(res.body.includes('whsec_'), false);
    assert.equal(res.body.includes('v1,'), false);

    // A verification without a webhook has its events recorded but nothing to deliver.
    const plain = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: '08099887766' });
    const plainId = (plain.json().data as { id: string; otp: string }).id;
    await h.call('POST', '/v1/otp/verify', token, { id: plainId, otp: (plain.json().data as { otp: string }).otp });
    const none = (await h.call('GET', `/v1/otp/${plainId}/webhooks`, token)).json() as { data: { deliveryStatus: string }[] };
    assert.deepEqual(
      none.data.map((d) => d.deliveryStatus),
      ['none'],
    );

    const other = await h.token();
    assert.equal((await h.call('GET', `/v1/otp/${id}/webhooks`, other)).statusCode, 404);
    assert.equal((await h.call('GET', `/v1/otp/not-a-uuid/webhooks`, token)).statusCode, 404);
    const anonymous = await h.call('GET', `/v1/otp/${id}/webhooks`, null);
    assert.equal(anonymous.statusCode, 401);
    assert.equal(anonymous.headers['www-authenticate'], 'Bearer');
    const verifyOnly = await h.token(['otp:verify'], client);
    assert.equal((await h.call('GET', `/v1/otp/${id}/webhooks`, verifyOnly)).statusCode, 200);
    const lookupOnly = await h.token(['lookup:request']);
    const forbidden = await h.call('GET', `/v1/otp/${id}/webhooks`, lookupOnly);
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.json().error.code, 'INSUFFICIENT_SCOPE');
  });
});

/** Names that resolve to addresses no public webhook has (there is no DNS here to rely on). */
const privateNames: Record<string, { address: string; family: 4 | 6 }[]> = {
  'loopback.test': [{ address: '127.0.0.1', family: 4 }],
  'six.test': [{ address: '::1', family: 6 }],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'hooks.internal': [{ address: '127.0.0.1', family: 4 }],
  'other.internal': [{ address: '127.0.0.1', family: 4 }],
  'outside.internal': [{ address: '10.9.9.9', family: 4 }],
};
const webhookLookup: LookupAll = async (hostname) => privateNames[hostname] ?? [];

/** A create's webhookUrl that no delivery could ever reach: 400 naming it, nothing made. */
async function refusedAtCreate(h: Harness, token: string, webhookUrl: string, issue: RegExp): Promise<void> {
  const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: '08030001234', webhookUrl });
  const err = expectV1Error(res, 400, 'VALIDATION_ERROR');
  assert.deepEqual(err.error.details?.map((d) => d.field), ['webhookUrl'], webhookUrl);
  assert.match(err.error.details?.[0]?.issue ?? '', issue, webhookUrl);
}

forEachDatabase('webhook SSRF guard', (kind) => {
  let h: Harness;
  let token: string;
  let r: Receiver;
  before(async () => {
    h = await createHarness(kind, {
      env: { ...webhookEnv, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' },
      clock: new TestClock(Date.now()),
      webhookLookup,
    });
    token = await h.token();
    r = await startReceiver();
  });
  after(async () => {
    await h.close();
    await r.close();
  });

  it('refuses at create a destination no delivery could reach: a private address, this machine', async () => {
    await refusedAtCreate(h, token, r.url, /must not point to a loopback address \(127\.0\.0\.1\) unless WEBHOOK_ALLOWED_NETWORKS lists its network/);
    await refusedAtCreate(h, token, `http://localhost:${r.port}/hooks`, /must not point to this machine \(localhost\)/);
    await refusedAtCreate(h, token, `http://[::1]:${r.port}/`, /loopback address \(::1\)/);
    await refusedAtCreate(h, token, 'http://169.254.169.254/latest/meta-data/', /link-local address/);
    await refusedAtCreate(h, token, 'http://10.0.0.5/hooks', /private address \(10\.0\.0\.5\)/);
    await refusedAtCreate(h, token, 'ftp://hooks.example.com/', /must use http or https/);
    assert.equal(r.requests.length, 0);
  });

  it('refuses at delivery time a name that resolves to a private address, and records why', async () => {
    const urls = [`http://loopback.test:${r.port}/hooks`, `http://six.test:${r.port}/`, 'http://metadata.test/latest/meta-data/'];
    const ids = [];
    for (const url of urls) ids.push((await succeedVerification(h, token, url)).id);
    await deliverDue(h);
    for (const id of ids) {
      const [event] = await h.services.webhooks.forVerification(id);
      assert.equal(event?.deliveryStatus, 'pending', 'kept, to be retried');
      assert.match(event?.attemptLog[0]?.error ?? '', /^destination refused: /);
      assert.equal(event?.attemptLog[0]?.statusCode, null);
    }
    assert.equal(r.requests.length, 0);
  });
});

/** A service inside a private network: WEBHOOK_ALLOWED_NETWORKS lets exactly its receivers through. */
forEachDatabase('webhooks to an allowed private network', (kind) => {
  let h: Harness;
  let token: string;
  let r: Receiver;
  before(async () => {
    h = await createHarness(kind, {
      env: { ...webhookEnv, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8, hooks.internal' },
      clock: new TestClock(Date.now()),
      webhookLookup,
    });
    token = await h.token();
    r = await startReceiver();
  });
  after(async () => {
    await h.close();
    await r.close();
  });

  it('delivers to an address in a listed range and to a listed name; every other private address stays refused', async () => {
    const delivered = [r.url, `http://hooks.internal:${r.port}/by-name`, `http://other.internal:${r.port}/in-range`];
    for (const url of delivered) await succeedVerification(h, token, url);
    const outside = await succeedVerification(h, token, 'http://outside.internal/hooks');
    await deliverDue(h);
    await waitFor('the three deliveries', async () => (r.requests.length >= 3 ? true : undefined));
    assert.deepEqual(r.requests.map((q) => q.url).sort(), ['/by-name', '/hooks', '/in-range']);
    const [refused] = await h.services.webhooks.forVerification(outside.id);
    assert.match(refused?.attemptLog[0]?.error ?? '', /outside\.internal resolves to 10\.9\.9\.9 is a private address/);
    await refusedAtCreate(h, token, 'http://10.0.0.5/hooks', /private address \(10\.0\.0\.5\) unless WEBHOOK_ALLOWED_NETWORKS/);
    await refusedAtCreate(h, token, 'http://[::1]/hooks', /loopback address/);
  });

  it('holds a client\'s default webhook to the same rule', async () => {
    const c = await h.client();
    const admin = (change: Record<string, unknown>) => runAdminCommand(adminDeps(h.services), { name: 'clients.update', id: c.clientId, change });
    const refused = await admin({ defaultWebhookUrl: 'http://192.168.1.20/hooks' });
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? '' : refused.error, /--default-webhook must not point to a private address \(192\.168\.1\.20\)/);
    assert.equal((await admin({ defaultWebhookUrl: `http://hooks.internal:${r.port}/default` })).ok, true);
  });
});

forEachDatabase('webhook retries run out', (kind) => {
  let h: Harness;
  let client: ClientCredentials;
  let token: string;
  let r: Receiver | null = null;
  before(async () => {
    // A short schedule, so that the test clock stays near the real time the receiver checks timestamps against.
    h = await createHarness(kind, { env: { ...webhookEnv, WEBHOOK_RETRY_DELAYS: '1,2,3' }, clock: new TestClock(Date.now()) });
    client = await h.client();
    token = await h.token(undefined, client);
  });
  after(async () => {
    await h.close();
    await r?.close();
  });
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    r = await startReceiver(...args);
    return r;
  };
  const onlyEvent = async (verificationId: string): Promise<WebhookEventWithAttempts> => {
    const [event, ...rest] = await h.services.webhooks.forVerification(verificationId);
    assert.ok(event, 'an event was recorded');
    assert.equal(rest.length, 0);
    return event;
  };

  it('keeps an event as failed when the retries run out; the operator can read and replay it', async () => {
    let healthy = false;
    const r = await receiver((_req, res) => void res.writeHead(healthy ? 200 : 500).end());
    const { id } = await succeedVerification(h, token, r.url);
    const retries = h.config.WEBHOOK_RETRY_DELAYS.length;
    for (let i = 0; i <= retries; i += 1) {
      await deliverDue(h);
      h.clock.advance(Math.max(...h.config.WEBHOOK_RETRY_DELAYS) * 1200 + 1);
    }
    await deliverDue(h);
    let event = await onlyEvent(id);
    assert.equal(r.requests.length, retries + 1);
    assert.equal(event.deliveryStatus, 'failed');
    assert.equal(event.attempts, retries + 1);
    assert.equal(event.nextAttemptAt, null);
    assert.equal(event.lastError, 'HTTP 500');
    assert.equal(event.attemptLog.length, retries + 1);
    assert.ok(event.attemptLog.every((a) => a.outcome === 'failed' && a.statusCode === 500));
    assert.equal(event.attemptLog.at(-1)?.nextAttemptAt, null);
    assert.equal(new Set(r.requests.map((q) => q.headers['webhook-id'])).size, 1);

    const failed = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.list', status: 'failed', verificationId: null, limit: 100 });
    assert.ok(failed.ok);
    assert.ok((failed.value as { id: string }[]).some((e) => e.id === event.id));
    const shown = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.show', id: event.id });
    assert.ok(shown.ok);
    const detail = shown.value as { attempts: unknown[]; deliveryStatus: string; payload: unknown };
    assert.equal(detail.attempts.length, retries + 1);
    assert.equal(detail.deliveryStatus, 'failed');
    assert.equal(JSON.stringify(detail).includes('whsec_'), false);

    healthy = true;
    const replayed = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.replay', id: event.id });
    assert.ok(replayed.ok, replayed.ok ? '' : replayed.error);
    assert.equal((replayed.value as { deliveryStatus: string }).deliveryStatus, 'pending');
    await deliverDue(h);
    event = await onlyEvent(id);
    assert.equal(event.deliveryStatus, 'delivered');
    assert.equal(event.attempts, retries + 2);
    assert.equal(r.requests.at(-1)?.headers['webhook-id'], event.id);
    verifySignature(client.webhookSecret, r.requests.at(-1) ?? r.requests[0] ?? assert.fail());

    // A replay of a delivered event sends it once more, with a fresh schedule.
    const again = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.replay', id: event.id });
    assert.ok(again.ok);
    await deliverDue(h);
    assert.equal((await onlyEvent(id)).attempts, retries + 3);
    assert.equal(r.requests.length, retries + 3);

    const unknown = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.replay', id: '00000000-0000-4000-8000-000000000000' });
    assert.equal(unknown.ok, false);
    const notUuid = await runAdminCommand(adminDeps(h.services), { name: 'webhooks.show', id: 'nope' });
    assert.equal(notUuid.ok, false);
  });

});
