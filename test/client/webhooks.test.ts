import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, type OtpClient, type WebhookEvent } from '../../client/src/index.js';
import type { ClientCredentials } from '../../src/oauth/client-service.js';
import { forEachDatabase } from '../support/each-database.js';
import { startReceiver, waitFor, type Received, type Receiver } from '../webhooks/helpers.js';
import { codeOf, freshNumber, startClientTestService, type ClientTestService } from './service.js';

/**
 * verifyWebhook (contract 12) on webhooks the service really delivered (contract 4) to a receiver on
 * 127.0.0.1 whose handler checks them with it: the event comes back typed, and an altered body, a stale or
 * future timestamp, another secret or a missing header are refused. During a secret rotation the service
 * signs with both secrets, and either verifies.
 */

function refused(check: () => unknown, reason: RegExp): void {
  assert.throws(check, (err: unknown) => err instanceof WebhookVerificationError && reason.test(err.message));
}

forEachDatabase('verifyWebhook on delivered webhooks', (kind) => {
  let s: ClientTestService;
  let credentials: ClientCredentials;
  let client: OtpClient;
  let receiver: Receiver;
  /** What the receiver's handler made of each request: the event, or why it refused it. */
  const outcomes: (WebhookEvent | string)[] = [];
  let secrets: string[] = [];

  before(async () => {
    s = await startClientTestService(kind, { PHONE_COOLDOWN_SECONDS: '0' });
    credentials = await s.register();
    secrets = [credentials.webhookSecret];
    client = s.client(credentials);
    // The handler a receiver would write: verify the raw body, answer 204, or 400 to what does not verify.
    receiver = await startReceiver((req, res) => {
      try {
        outcomes.push(verifyWebhook(req.body, req.headers, secrets));
        res.writeHead(204).end();
      } catch (err) {
        outcomes.push(err instanceof WebhookVerificationError ? err.message : String(err));
        res.writeHead(400).end();
      }
    });
  });
  after(async () => {
    await receiver?.close();
    await s?.close();
  });

  /** A verification with the receiver as its webhook, verified, and the request the service delivered. */
  async function delivered(): Promise<{ id: string; request: Received; outcome: WebhookEvent | string }> {
    const seen = receiver.requests.length;
    const created = await client.createVerification({ countryCode: '+234', phoneNumber: freshNumber(), webhookUrl: receiver.url });
    await client.verify(created.id, codeOf(created));
    const request = await waitFor('the webhook', () => receiver.requests[seen]);
    const outcome = outcomes[seen];
    assert.ok(outcome !== undefined);
    return { id: created.id, request, outcome };
  }

  it('returns the typed event of a delivered webhook, in the receiver\'s handler, as standardwebhooks does', async () => {
    const { id, request, outcome } = await delivered();
    assert.ok(typeof outcome === 'object', `the handler refused it: ${String(outcome)}`);
    assert.equal(outcome.event, 'action.otp.success');
    assert.equal(outcome.data.id, id);
    assert.equal(outcome.data.status, 'SUCCESS');
    assert.deepEqual(outcome, new Webhook(credentials.webhookSecret).verify(request.body, stringHeaders(request)));
    // A fetch Headers and the bytes as received do as well.
    const fromHeaders = verifyWebhook(Buffer.from(request.body), new Headers(stringHeaders(request)), credentials.webhookSecret);
    assert.deepEqual(fromHeaders, outcome);
    // The service recorded the 204 the handler answered.
    const deliveries = await waitFor('the delivery recorded', async () => {
      const list = await client.getWebhookDeliveries(id);
      return list[0]?.deliveryStatus === 'delivered' ? list : false;
    });
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0]?.attempts?.[0]?.statusCode, 204);
  });

  it('refuses an altered body, a stale or future timestamp, another secret and missing or foreign signatures', async () => {
    const { request } = await delivered();
    const headers = stringHeaders(request);
    const secret = credentials.webhookSecret;
    const sentAt = Number(headers['webhook-timestamp']) * 1000;
    const at = (ms: number) => ({ now: () => sentAt + ms });

    refused(() => verifyWebhook(request.body.replace('SUCCESS', 'FAILED'), headers, secret), /no webhook-signature matches/);
    refused(() => verifyWebhook(`${request.body} `, headers, secret), /no webhook-signature matches/);
    refused(() => verifyWebhook(request.body, { ...headers, 'webhook-timestamp': String(sentAt / 1000 + 1) }, secret), /no webhook-signature matches/);
    refused(() => verifyWebhook(request.body, { ...headers, 'webhook-id': 'evt_other' }, secret), /no webhook-signature matches/);
    refused(() => verifyWebhook(request.body, headers, otherSecret()), /no webhook-signature matches/);
    refused(() => verifyWebhook(request.body, { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }, secret), /no webhook-signature matches/);
    refused(() => verifyWebhook(request.body, { 'webhook-id': headers['webhook-id'], 'webhook-timestamp': headers['webhook-timestamp'] }, secret), /missing/);
    // Five minutes either way, no more.
    assert.equal(verifyWebhook(request.body, headers, secret, at(299_000)).event, 'action.otp.success');
    refused(() => verifyWebhook(request.body, headers, secret, at(301_000)), /too old/);
    assert.equal(verifyWebhook(request.body, headers, secret, at(-299_000)).event, 'action.otp.success');
    refused(() => verifyWebhook(request.body, headers, secret, at(-301_000)), /in the future/);
    refused(() => verifyWebhook(request.body, headers, secret, { ...at(60_000), toleranceSeconds: 30 }), /too old/);
  });

  it('verifies with the new or the old secret while a rotation has the service sign with both', async () => {
    const old = credentials.webhookSecret;
    const rotated = await s.h.services.clients.rotateWebhookSecret(credentials.clientId);
    assert.ok(rotated);
    // The receiver switches to the new secret at once and keeps the old one for what is in flight.
    secrets = [rotated.webhookSecret, old];
    const { request, outcome } = await delivered();
    assert.ok(typeof outcome === 'object', `the handler refused it: ${String(outcome)}`);
    const headers = stringHeaders(request);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    assert.equal(verifyWebhook(request.body, headers, rotated.webhookSecret).data.id, outcome.data.id);
    assert.equal(verifyWebhook(request.body, headers, old).data.id, outcome.data.id);
    assert.equal(verifyWebhook(request.body, headers, [otherSecret(), rotated.webhookSecret]).data.id, outcome.data.id);
    refused(() => verifyWebhook(request.body, headers, otherSecret()), /no webhook-signature matches/);
  });
});

/** A signing secret the service never used. */
function otherSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64')}`;
}

/** The three Standard Webhooks headers of a received request, as strings. */
function stringHeaders(request: Received): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const get = (name: string) => {
    const value = request.headers[name];
    assert.equal(typeof value, 'string', name);
    return String(value);
  };
  return { 'webhook-id': get('webhook-id'), 'webhook-timestamp': get('webhook-timestamp'), 'webhook-signature': get('webhook-signature') };
}
