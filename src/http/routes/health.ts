import type { FastifyInstance } from 'fastify';

/** GET /healthz (the process answers) and GET /readyz (the database answers). */
export function healthRoutes(app: FastifyInstance, ready: () => Promise<boolean>): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const ok = await ready();
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
  });
}
