import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * A local stand-in for a provider's JSON API as the bench reaches it (bench/lib/graph-receiver.ts,
 * bench/lib/telegram-receiver.ts): `node:http` with keep-alive, every request answered at once, and the arrival of
 * each request that carries a key noted by that key (the first one only: a retry does not move it).
 */
export interface JsonReceiver {
  readonly url: string;
  /** key -> when its request arrived (ms since the epoch, by this process's monotonic clock). */
  readonly arrivals: Map<string, number>;
  requests(): number;
  close(): Promise<void>;
}

/** How one request is answered, and the key its arrival is noted by (null: not noted). */
export interface JsonAnswer {
  readonly key: string | null;
  readonly status?: number;
  readonly body: unknown;
}

/** `answer`: from the request's path and its JSON body (null when it is not a JSON object). */
export async function startJsonReceiver(answer: (path: string, body: Readonly<Record<string, unknown>> | null) => JsonAnswer): Promise<JsonReceiver> {
  const arrivals = new Map<string, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      requests++;
      let body: Record<string, unknown> | null = null;
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
      } catch {
        // answered all the same
      }
      const answered = answer(req.url ?? '', body);
      if (answered.key && !arrivals.has(answered.key)) arrivals.set(answered.key, at);
      res.writeHead(answered.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(answered.body));
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
