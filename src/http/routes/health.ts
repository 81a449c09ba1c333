import type { FastifyInstance } from 'fastify';

/** GET /healthz (the process answers) and GET /readyz (the database answers); logged at debug (probe-logging.ts). */
export function healthRoutes(app: FastifyInstance, ready: () => Promise<boolean>): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    const ok = await ready();
    if (!ok) request.log.warn('readiness probe: the database does not answer');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
  });
}
