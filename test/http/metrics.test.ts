import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat, { type PromFamily, type PromSample } from 'parse-prometheus-text-format';
import { createVerification, e164Of, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { gatewayReceipt } from '../support/gateway.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import { TestClock } from '../support/clock.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Prometheus's own parser and linter (promtool, Debian's `prometheus`, installed by .ci/run): the exposition must
 * parse, and our own metrics follow Prometheus's naming rules (prom-client's process metrics break one, a gauge
 * named _total, which is not ours to rename), or the test fails with what promtool said.
 */
function promtoolCheck(text: string): void {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.error, undefined, `promtool could not run: ${String(run.error)}`);
  const said = `${run.stdout}${run.stderr}`;
  // Exit 1: the text does not parse. Exit 3: lint problems only, one line each, named by metric.
  assert.ok(run.status === 0 || run.status === 3, `promtool check metrics failed (${String(run.status)}): ${said}`);
  const ours = said.split('\n').filter((l) => l.startsWith('otp_'));
  assert.deepEqual(ours, [], `promtool lint: ${said}`);
}

/** A histogram's _count and _sum for one label set, read from the text (parse-prometheus-text-format merges labelled histograms). */
function histogram(text: string, name: string, labels: string): { count: number; sum: number } | null {
  const read = (suffix: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}_${suffix}{${labels}}`) || (labels === '' && l.startsWith(`${name}_${suffix} `)));
    return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const count = read('count');
  const sum = read('sum');
  return count === null || sum === null ? null : { count, sum };
}

/**
 * Contract 12, GET /metrics: Prometheus text, scraped and read with a parser of the format (a port of the
 * Prometheus Python client's), after real traffic: SMS through the operator's gateway (`http`, a real local
 * gateway) with a signed receipt, a dropped call through `log`, verifies, a cancel, and a webhook to a real receiver.
 */
forEachDatabase('metrics', (kind) => {
  let gateway: Receiver;
  let hooks: Receiver;
  let h: Harness;
  const refused = new Set<string>();
  before(async () => {
    gateway = await startReceiver((req: { body: string }, res: http.ServerResponse) => {
      const { verificationId, to } = JSON.parse(req.body) as { verificationId: string; to: string };
      if (refused.has(to)) res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":"barred"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${verificationId}` }));
    });
    hooks = await startReceiver();
    h = await createHarness(kind, {
      // Webhook receivers check signature timestamps: the clock starts at the real time.
      clock: new TestClock(Date.now()),
      env: {
        SMS_PROVIDER: 'http,log',
        CALL_PROVIDER: 'log',
        HTTP_GATEWAY_URL: gateway.url,
        HTTP_GATEWAY_SECRET: secret,
        PUBLIC_BASE_URL: 'https://otp.example.test',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    });
  });
  after(async () => {
    await h.close();
    await gateway.close();
    await hooks.close();
  });

  async function scrape(): Promise<{ families: Map<string, PromFamily>; text: string }> {
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    promtoolCheck(res.body);
    const families = parsePrometheusTextFormat(res.body);
    return { families: new Map(families.map((f) => [f.name, f])), text: res.body };
  }
  const sample = (families: Map<string, PromFamily>, name: string, labels: Record<string, string>): PromSample | undefined =>
    families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  const value = (families: Map<string, PromFamily>, name: string, labels: Record<string, string>): number =>
    Number(sample(families, name, labels)?.value ?? 0);

  describe('happy', () => {
    it('counts requests, verifications, sends, receipts and webhooks, each by its labels', async () => {
      const before = (await scrape()).families;
      const token = await h.token();
      const sms = await createVerification(h, token, { webhookUrl: `${hooks.url}/hooks` });
      const call = await createVerification(h, token, { type: 'DROPPED_CALL' });
      const barredNumber = nextLocalNumber();
      refused.add(e164Of(barredNumber));
      await createVerification(h, token, { phoneNumber: barredNumber });
      await h.services.sendWorker.idle();
      h.clock.advance(1500);
      assert.equal((await gatewayReceipt(h, { messageId: `gw-${sms.id}`, status: 'DELIVERED' }, secret)).statusCode, 200);
      assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: sms.id, otp: sms.otp })).statusCode, 200);
      assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: call.id, otp: '0000' === call.otp ? '1111' : '0000' })).statusCode, 422);
      assert.equal((await h.call('POST', `/v1/otp/${call.id}/cancel`, token)).statusCode, 200);
      await h.services.webhookWorker.idle();
      const { families, text } = await scrape();
      const grew = (name: string, labels: Record<string, string>) => value(families, name, labels) - value(before, name, labels);

      assert.equal(grew('otp_http_requests_total', { method: 'POST', route: '/v1/otp/request', status: '200' }), 3);
      assert.equal(grew('otp_http_requests_total', { method: 'POST', route: '/v1/otp/verify', status: '422' }), 1);
      assert.equal(grew('otp_http_requests_total', { method: 'POST', route: '/v1/otp/:id/cancel', status: '200' }), 1);
      assert.equal(families.get('otp_http_request_duration_seconds')?.type, 'HISTOGRAM');
      assert.ok((histogram(text, 'otp_http_request_duration_seconds', 'method="POST",route="/v1/otp/request"')?.count ?? 0) >= 3);

      assert.equal(grew('otp_verifications_created_total', { type: 'SMS', country: '+234' }), 2);
      assert.equal(grew('otp_verifications_created_total', { type: 'DROPPED_CALL', country: '+234' }), 1);
      assert.equal(grew('otp_verifications_ended_total', { type: 'SMS', country: '+234', status: 'SUCCESS', reason: '' }), 1);
      assert.equal(grew('otp_verifications_ended_total', { type: 'DROPPED_CALL', country: '+234', status: 'FAILED', reason: 'CANCELED' }), 1);

      assert.equal(grew('otp_sends_total', { channel: 'sms', provider: 'http', outcome: 'accepted' }), 1);
      assert.equal(grew('otp_sends_total', { channel: 'sms', provider: 'http', outcome: 'permanent' }), 1);
      assert.equal(grew('otp_sends_total', { channel: 'sms', provider: 'log', outcome: 'accepted' }), 1, 'the refused one failed over');
      assert.equal(grew('otp_sends_total', { channel: 'call', provider: 'log', outcome: 'accepted' }), 1);

      assert.equal(grew('otp_receipts_total', { channel: 'sms', provider: 'http', status: 'DELIVERED' }), 1);
      const latency = histogram(text, 'otp_receipt_latency_seconds', 'provider="http",status="DELIVERED"');
      assert.ok(latency && latency.count >= 1);
      assert.ok(latency.sum >= 1.5, `the receipt came 1.5 s after the send: ${latency.sum}`);

      assert.equal(grew('otp_webhook_deliveries_total', { outcome: 'delivered' }), 1);
      assert.equal(hooks.requests.length, 1);
      assert.ok((histogram(text, 'otp_webhook_lag_seconds', '')?.count ?? 0) >= 1);

      assert.ok(families.has('process_cpu_user_seconds_total'), 'the process metrics too');
      for (const hidden of [sms.id, sms.phoneNumber, call.pairedNumber, token]) assert.ok(!text.includes(hidden), `no ${hidden} in the metrics`);
    });

    it('labels an unknown path as unmatched, never by the path itself', async () => {
      await h.app.inject({ method: 'GET', url: '/no/such/path/123' });
      const { families, text } = await scrape();
      assert.ok(value(families, 'otp_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1);
      assert.ok(!text.includes('/no/such/path'));
    });
  });
});
