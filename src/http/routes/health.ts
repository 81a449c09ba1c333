import type { FastifyInstance } from 'fastify';

const statusOf = (values: readonly string[], description: string) =>
  ({ type: 'object', description, required: ['status'], properties: { status: { type: 'string', enum: values } } }) as const;

const healthzSchema = {
  operationId: 'healthz',
  summary: 'Liveness',
  description: 'The process answers. No database call.',
  tags: ['Health'],
  response: { 200: statusOf(['ok'], 'The process is up.') },
} as const;

const readyzSchema = {
  operationId: 'readyz',
  summary: 'Readiness',
  description: 'The database answers, within DATABASE_TIMEOUT_MS.',
  tags: ['Health'],
  response: {
    200: statusOf(['ready'], 'The database answered.'),
    503: statusOf(['unavailable'], 'The database did not answer in time.'),
  },
} as const;

/** GET /healthz (the process answers) and GET /readyz (the database answers); logged at debug (probe-logging.ts). */
export function healthRoutes(app: FastifyInstance, ready: () => Promise<boolean>): void {
  app.get('/healthz', { schema: healthzSchema }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: readyzSchema }, async (request, reply) => {
    const ok = await ready();
    if (!ok) request.log.warn('readiness probe: the database does not answer');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
  });
}
