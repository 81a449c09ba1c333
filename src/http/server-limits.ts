import http from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyBaseLogger } from 'fastify';
import { errorBody } from './envelope.js';
import { errorCatalogue, type ErrorCode } from '../domain/error-catalogue.js';

/** How long a client may take and how many may be connected at once (contract 6). */
export interface ServerLimits {
  /** Time from the connection (or the previous request) until the request's headers are in. */
  readonly headersTimeoutMs: number;
  /** Time from the connection (or the previous request) until the whole request, body included, is in. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open between requests. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections at most; further ones are closed as soon as they are accepted. */
  readonly maxConnections: number;
}

/**
 * The Node http server settings behind the limits. Node checks the header and request time-outs every
 * `connectionsCheckingInterval` (30 s by default), which would let a stalled client stay up to twice the
 * time-out: it is checked at least every second here.
 */
export function serverOptions(limits: ServerLimits) {
  const checkEvery = Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));
  return {
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: checkEvery,
    },
    // Fastify sets these on the server it makes (its own defaults would undo the ones above).
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
  };
}

/** Applies what Fastify has no option for, once the server exists. */
export function applyConnectionCap(server: http.Server, limits: ServerLimits): void {
  server.maxConnections = limits.maxConnections;
}

/** The refusals the HTTP server makes itself, before any route runs (contract 5). */
function refusalCode(error: ConnectionError): ErrorCode {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'REQUEST_TIMEOUT';
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'HEADERS_TOO_LARGE';
  return 'BAD_REQUEST';
}

/** True when an answer has started on this socket: writing another one would corrupt it. */
function answerStarted(socket: Socket): boolean {
  const message: unknown = Reflect.get(socket, '_httpMessage');
  return typeof message === 'object' && message !== null && Reflect.get(message, 'headersSent') === true;
}

/**
 * Answers what the HTTP parser or the time-outs refused (malformed request line, headers too large,
 * Content-Length with Transfer-Encoding, a request not received in time) in the contract's error shape,
 * then closes the connection. These come before routing, so the token endpoints get this shape too.
 */
export function clientErrorHandler(log: FastifyBaseLogger) {
  return (error: ConnectionError, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const code = refusalCode(error);
    log.debug({ code: error.code, refusal: code }, 'client error');
    if (socket.writable && !answerStarted(socket)) {
      const body = JSON.stringify(errorBody(code));
      const { status } = errorCatalogue[code];
      socket.write(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
