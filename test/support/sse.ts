import http from 'node:http';

/** One server-sent event as received. */
export interface ReceivedEvent {
  readonly event: string;
  readonly data: unknown;
}

/** A server-sent event stream read over a real connection. */
export interface EventStream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly events: ReceivedEvent[];
  /** Resolves with the first event (already received or to come) that matches, or rejects after `ms`. */
  waitFor(match: (e: ReceivedEvent) => boolean, ms?: number): Promise<ReceivedEvent>;
  /** Resolves once the server ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export function openEventStream(url: string): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream' } }, (res) => {
      const events: ReceivedEvent[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split('\n');
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
          const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
          if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) as unknown });
        }
        for (const wake of waiters) wake();
      });
      const ended = new Promise<void>((done) => res.on('close', () => done()));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        ended,
        close: () => req.destroy(),
        waitFor(match, ms = 5000) {
          return new Promise((found, fail) => {
            const check = () => {
              const hit = events.find(match);
              if (!hit) return;
              cleanup();
              found(hit);
            };
            const timer = setTimeout(() => {
              cleanup();
              fail(new Error(`no matching event within ${ms} ms; got ${JSON.stringify(events.map((e) => e.event))}`));
            }, ms);
            const cleanup = () => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
            check();
          });
        },
      });
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('event stream timed out')));
  });
}
