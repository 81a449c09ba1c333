import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** A local HTTP endpoint that answers 204 at once and notes when each verification's event arrived. */
export interface WebhookReceiver {
  readonly url: string;
  /** performance.now() at the end of the first delivery of each verification id (payload data.id). */
  readonly arrivals: Map<string, number>;
  /** Deliveries received, duplicates included. */
  received(): number;
  /** Deliveries that carried the Standard Webhooks headers. */
  signed(): number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const arrivals = new Map<string, number>();
  let received = 0;
  let signed = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      received++;
      if (req.headers['webhook-id'] && req.headers['webhook-timestamp'] && req.headers['webhook-signature']) signed++;
      const id = eventVerificationId(Buffer.concat(chunks).toString('utf8'));
      if (id && !arrivals.has(id)) arrivals.set(id, at);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    arrivals,
    received: () => received,
    signed: () => signed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** data.id of an event body {event, data: {id, ...}}, or null. */
function eventVerificationId(body: string): string | null {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const data: unknown = (parsed as { data?: unknown }).data;
    if (typeof data !== 'object' || data === null) return null;
    const id: unknown = (data as { id?: unknown }).id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}
