import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FeedEvent, InboxFeed } from '../../inbox/inbox-feed.js';
import type { InboxMessage } from '../../inbox/inbox-message.js';
import { inboxHostAllowed } from '../dev-inbox-hosts.js';
import { devInboxPage } from '../dev-inbox-page.js';
import { sendError } from '../envelope.js';

export interface DevInboxRouteDeps {
  readonly feed: InboxFeed;
  /** The most messages the page shows. */
  readonly limit: number;
  /** Event streams open at once at most (each open page holds one). */
  readonly maxStreams: number;
  /** How often an idle stream gets a comment line, so that proxies and the browser keep it open. */
  readonly heartbeatMs: number;
  /** Hosts it answers on besides loopback (see inboxHosts): PUBLIC_BASE_URL's, the bound address. */
  readonly hosts: readonly string[];
}

/** A page that stops reading is cut off once this much is waiting to be written to it. */
const maxBufferedBytes = 1024 * 1024;

/**
 * GET /dev/inbox (the page) and GET /dev/inbox/events (its server-sent events: a snapshot, then each new
 * message and each change of a shown verification's state). Registered only when the inbox is on
 * (config.devInbox); otherwise both are the contract's 404. No authentication: it is a development tool that is
 * never on beside a real provider unless the operator asked, and it shows codes and numbers, nothing else.
 */
// A development tool, not part of the API: left out of the OpenAPI document.
const pageSchema = { hide: true } as const;
const eventsSchema = { hide: true } as const;

export function devInboxRoutes(app: FastifyInstance, deps: DevInboxRouteDeps): void {
  const streams = new Set<ServerResponse>();
  // Asked for under another name (DNS rebinding, see dev-inbox-hosts.ts): answered as when the inbox is off, the
  // contract's 404 rather than a 403 that would tell a foreign page the inbox is there. The raw Host header, never
  // X-Forwarded-Host: the browser sets the one, the page could set the other.
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!inboxHostAllowed(request.headers.host, deps.hosts)) {
      return sendError(reply, 'NOT_FOUND', { message: 'Not found: the development inbox answers only on localhost and the service\'s own host name' });
    }
  };
  // Open pages never hold up a shutdown: their streams end before the server waits for its connections.
  app.addHook('preClose', (done) => {
    for (const stream of streams) stream.end();
    streams.clear();
    done();
  });

  app.get('/dev/inbox', { schema: pageSchema, onRequest }, async (_request, reply) => {
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header(
        'content-security-policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; ` +
          `base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      )
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .type('text/html; charset=utf-8')
      .send(devInboxPage(nonce, deps.limit));
  });

  // No HEAD twin: a stream has no headers-only form.
  app.get('/dev/inbox/events', { exposeHeadRoute: false, schema: eventsSchema, onRequest }, async (request, reply) => {
    if (streams.size >= deps.maxStreams) {
      return sendError(reply, 'RATE_LIMITED', { message: 'Too many development inbox pages are open', retryAfterSeconds: 5 });
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
      'x-request-id': request.id,
    });
    streams.add(res);
    const write = (chunk: string) => {
      if (res.writableEnded) return;
      res.write(chunk);
      if (res.writableLength > maxBufferedBytes) res.destroy();
    };
    // Events that come while the snapshot is read are held, then sent after it (the page ignores repeats).
    let held: FeedEvent[] | null = [];
    const send = (event: FeedEvent) =>
      event.kind === 'message' ? write(sse('sent', event.message)) : write(sse('state', event.state));
    const unsubscribe = deps.feed.subscribe((event) => (held ? held.push(event) : send(event)));
    const heartbeat = setInterval(() => write(': keep-alive\n\n'), deps.heartbeatMs);
    res.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      streams.delete(res);
    });
    write('retry: 2000\n\n');
    try {
      const messages: InboxMessage[] = await deps.feed.snapshot();
      write(sse('snapshot', { messages }));
    } catch (err) {
      request.log.warn({ err }, 'could not read the development inbox');
      res.end();
      return;
    }
    const waiting = held;
    held = null;
    for (const event of waiting) send(event);
  });
}

/** One server-sent event; JSON has no raw line breaks, so the data is one line. */
function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
