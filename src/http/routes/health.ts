import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const probePaths = new Set(['/healthz', '/readyz']);

/**
 * Whether a request is a probe. Load balancers and orchestrators ask every few seconds, so these are logged at
 * debug rather than with every other request at info (which would bury what matters).
 */
export function isProbe(url: string | undefined): boolean {
  return url !== undefined && probePaths.has(url.split('?', 1)[0] ?? url);
}

/** The request log line of a probe, at debug (the app's own request logging skips probes: isProbe). */
function logAtDebug(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  request.log.debug(
    { method: request.method, url: request.url.split('?', 1)[0], statusCode: reply.statusCode, responseTime: reply.elapsedTime },
    'probe answered',
  );
  done();
}

/** GET /healthz (the process answers) and GET /readyz (the database answers). */
export function healthRoutes(app: FastifyInstance, ready: () => Promise<boolean>): void {
  app.get('/healthz', { onResponse: logAtDebug }, async () => ({ status: 'ok' }));
  app.get('/readyz', { onResponse: logAtDebug }, async (request, reply) => {
    const ok = await ready();
    if (!ok) request.log.warn('readiness probe: the database does not answer');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
  });
}
