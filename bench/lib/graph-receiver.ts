import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

/**
 * Meta's Graph API as the bench's `meta` provider reaches it: a local receiver of `POST /{version}/{phone id}/messages`
 * that notes when each number's message arrived and answers as the Cloud API does (`messages[0].id`, a wamid).
 * Prism (the tests' validating peer) would measure itself here, not the service: its validation costs more than
 * the service's whole send. The request's shape is what the tests check against Meta's own description.
 */
export interface GraphReceiver {
  readonly url: string;
  /** `+<to>` -> when its message arrived (ms since the epoch, by this process's monotonic clock). */
  readonly arrivals: Map<string, number>;
  requests(): number;
  close(): Promise<void>;
}

export async function startGraphReceiver(): Promise<GraphReceiver> {
  const arrivals = new Map<string, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      requests++;
      let to = '';
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to?: unknown };
        to = typeof body.to === 'string' ? body.to : '';
      } catch {
        // answered all the same
      }
      if (to && !arrivals.has(`+${to}`)) arrivals.set(`+${to}`, at);
      const wamid = `wamid.${randomBytes(12).toString('base64url')}`;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: wamid }] }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
