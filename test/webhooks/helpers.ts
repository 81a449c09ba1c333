import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Harness } from '../support/harness.js';

/** A request a test receiver got. */
export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** How a test receiver answers; it may hold the response open (never answering is a timeout). */
export type ReceiverHandler = (req: Received, res: http.ServerResponse, index: number) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1 that records what it gets. */
export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly requests: Received[];
  close(): Promise<void>;
}

export async function startReceiver(handler: ReceiverHandler = (_req, res) => void res.writeHead(204).end()): Promise<Receiver> {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      Promise.resolve(handler(received, res, requests.length - 1)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` until it returns a value (not undefined/false) or the deadline passes. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Settings for webhook tests: local receivers allowed, limits out of the way. */
export const webhookEnv: Record<string, string> = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_LEASE_MS: '10000',
  PHONE_COOLDOWN_SECONDS: '0',
  PHONE_LIMIT_COUNT: '100000',
  // These tests walk sequential numbers, as an SMS-pumping attack would: the prefix limit is off here.
  PREFIX_LIMIT_COUNT: '0',
};

let phoneSeq = 0;

/** Creates a verification with this webhook and verifies it: the SUCCESS event is in the outbox. */
export async function succeedVerification(h: Harness, token: string, webhookUrl: string): Promise<{ id: string }> {
  phoneSeq += 1;
  const phoneNumber = `0801${String(1_000_000 + (phoneSeq % 9_000_000)).padStart(7, '0')}`;
  const created = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber, webhookUrl });
  if (created.statusCode !== 200) throw new Error(`create failed: ${created.statusCode} ${created.body}`);
  const { id, otp } = created.json().data as { id: string; otp: string };
  const verified = await h.call('POST', '/v1/otp/verify', token, { id, otp });
  if (verified.statusCode !== 200) throw new Error(`verify failed: ${verified.statusCode} ${verified.body}`);
  return { id };
}

/** One round of the delivery worker, waiting for its attempts to end. */
export async function deliverDue(h: Harness): Promise<void> {
  await h.services.webhookWorker.runOnce();
  await h.services.webhookWorker.idle();
}

/** Checks a received request's signature with the standardwebhooks package; returns the parsed body. */
export function verifySignature(secret: string, req: Received): unknown {
  return new Webhook(secret).verify(req.body, {
    'webhook-id': String(req.headers['webhook-id']),
    'webhook-timestamp': String(req.headers['webhook-timestamp']),
    'webhook-signature': String(req.headers['webhook-signature']),
  });
}
