import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { runLoad } from './load.js';
import type { Created, ServiceTarget } from './service-scenarios.js';
import type { WebhookReceiver } from './webhook-receiver.js';

/**
 * Webhooks: verifications whose webhookUrl is the local receiver are verified (right code), which commits a
 * state change and its outbox event; the delivery worker then POSTs the event to the receiver.
 * - latency: verifies sent at a steady `rate` per second (paced every few ms, not in bursts); for each, the
 *   time from the verify response reaching the load generator (just after the commit) to the receiver having
 *   the webhook. Both clocks are this process's performance.now(). A delivery that beats the response home
 *   counts as 0 ms.
 * - throughput: a batch verified as fast as the service answers; deliveries per second from the first
 *   verify sent to the last delivery received (so bounded by the verify rate when delivery keeps up).
 */
export interface WebhookLatency {
  readonly rate: number;
  readonly sent: number;
  readonly verified: number;
  readonly delivered: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface WebhookThroughput {
  readonly verified: number;
  readonly verifiesPerSecond: number;
  readonly delivered: number;
  readonly deliveriesPerSecond: number;
  readonly seconds: number;
}

export type WebhookResult =
  | { readonly available: false; readonly note: string }
  | {
      readonly available: true;
      readonly latency: WebhookLatency;
      readonly throughput: WebhookThroughput | null;
      readonly signedShare: number;
      readonly note: string;
    };

/** Verifies `items` at `rate` per second over up to `connections` connections; notes when each 200 came back. */
async function pacedVerify(
  t: ServiceTarget,
  items: readonly Created[],
  rate: number,
  connections: number,
): Promise<{ answered: Map<string, number>; sent: number }> {
  const pool = new Pool(t.url, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const answered = new Map<string, number>();
  const inFlight: Promise<void>[] = [];
  const headers = { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' };
  const start = performance.now();
  let sent = 0;
  try {
    while (sent < items.length) {
      const due = Math.min(items.length, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
      for (; sent < due; sent++) {
        const item = items[sent];
        if (!item) break;
        inFlight.push(
          pool
            .request({ path: '/v1/otp/verify', method: 'POST', headers, body: JSON.stringify(item) })
            .then(async (res) => {
              await res.body.dump();
              if (res.statusCode === 200) answered.set(item.id, performance.now());
            })
            .catch(() => undefined),
        );
      }
      await sleep(2);
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  return { answered, sent };
}

/** Waits until every id in `expected` has arrived, or nothing new came for `idleMs`, or `maxMs` passed. */
async function awaitDeliveries(
  receiver: WebhookReceiver,
  expected: Iterable<string>,
  idleMs: number,
  maxMs: number,
): Promise<number> {
  const ids = [...expected];
  const deadline = performance.now() + maxMs;
  let last = -1;
  let lastChange = performance.now();
  for (;;) {
    const got = ids.filter((id) => receiver.arrivals.has(id)).length;
    if (got === ids.length) return got;
    if (got !== last) {
      last = got;
      lastChange = performance.now();
    }
    if (performance.now() - lastChange > idleMs || performance.now() > deadline) return got;
    await sleep(100);
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function benchWebhooks(
  t: ServiceTarget,
  receiver: WebhookReceiver,
  latencyItems: readonly Created[],
  throughputItems: readonly Created[],
  options: { readonly rate: number; readonly connections: number },
): Promise<WebhookResult> {
  // Latency at a steady rate.
  const { answered, sent } = await pacedVerify(t, latencyItems, options.rate, options.connections);
  if (answered.size === 0) return { available: false, note: 'no verify of a webhook verification succeeded' };
  const delivered = await awaitDeliveries(receiver, answered.keys(), 5_000, 30_000);
  if (delivered === 0) {
    return {
      available: false,
      note: `not available: ${answered.size} verifications with a webhookUrl committed, no webhook delivered within 5 s (is the delivery worker in src/webhooks/ running?)`,
    };
  }
  const latencies: number[] = [];
  for (const [id, at] of answered) {
    const arrived = receiver.arrivals.get(id);
    if (arrived !== undefined) latencies.push(Math.max(0, arrived - at));
  }
  latencies.sort((a, b) => a - b);
  const latency: WebhookLatency = {
    rate: options.rate,
    sent,
    verified: answered.size,
    delivered,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? 0,
  };

  // Throughput: a batch verified at full speed.
  let throughput: WebhookThroughput | null = null;
  if (throughputItems.length > 0) {
    const okIds: string[] = [];
    let index = 0;
    const startedAt = performance.now();
    const load = await runLoad({
      url: t.url,
      connections: options.connections,
      seconds: 60,
      amount: throughputItems.length,
      method: 'POST',
      path: '/v1/otp/verify',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      setup: (req, context) => {
        const item = throughputItems[index++ % throughputItems.length];
        context.id = item?.id;
        return { ...req, body: JSON.stringify(item) };
      },
      onResponse: (status, _body, context) => {
        if (status === 200 && typeof context.id === 'string') okIds.push(context.id);
      },
    });
    const got = await awaitDeliveries(receiver, okIds, 5_000, 60_000);
    const lastArrival = okIds.reduce((m, id) => Math.max(m, receiver.arrivals.get(id) ?? startedAt), startedAt);
    const seconds = (lastArrival - startedAt) / 1000;
    throughput = {
      verified: okIds.length,
      verifiesPerSecond: load.okRps,
      delivered: got,
      deliveriesPerSecond: seconds > 0 ? got / seconds : 0,
      seconds,
    };
  }
  const received = receiver.received();
  return {
    available: true,
    latency,
    throughput,
    signedShare: received > 0 ? receiver.signed() / received : 0,
    note:
      delivered < answered.size
        ? `${answered.size - delivered} of ${answered.size} webhooks not delivered within the wait`
        : 'every committed event delivered',
  };
}
