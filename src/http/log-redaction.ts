/**
 * What the request log may show of a URL. Query strings can carry credentials (a client that puts its secret or
 * token there is refused, but the URL would still be logged), and some providers' callback paths end with a
 * per-deployment secret (Infobip, Africa's Talking): both are replaced.
 */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : '?[redacted]';
  const callback = /^(\/callbacks\/[^/]+)\/.+$/.exec(path);
  return `${callback ? `${callback[1]}/[redacted]` : path}${query}`;
}

/** The shape Fastify logs for a request, with the URL made safe to log. */
export function requestForLog(request: {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number | undefined } | null;
}): Record<string, unknown> {
  return {
    method: request.method,
    url: loggableUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
