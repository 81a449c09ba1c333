import type { FastifyInstance } from 'fastify';

/** What GET / names: where a person who opened the service's address can go next. */
export interface IndexLinks {
  readonly console: boolean;
  readonly devInbox: boolean;
}

const indexSchema = {
  operationId: 'index',
  summary: 'Where to go from here',
  description: "The service's name and the addresses a person opening it in a browser is looking for: the API reference, the OpenAPI document, the health checks, and the console and the development inbox when they are on.",
  tags: ['Health'],
  security: [],
  response: {
    200: {
      type: 'object',
      required: ['service', 'docs', 'openapi', 'health', 'ready'],
      properties: {
        service: { type: 'string', examples: ['otp-service'] },
        docs: { type: 'string', examples: ['/docs'] },
        openapi: { type: 'string', examples: ['/openapi.json'] },
        health: { type: 'string', examples: ['/healthz'] },
        ready: { type: 'string', examples: ['/readyz'] },
        console: { type: 'string', description: 'With CONSOLE=true.', examples: ['/console'] },
        devInbox: { type: 'string', description: 'While the development inbox is on.', examples: ['/dev/inbox'] },
      },
    },
  },
} as const;

/** GET /: a pointer, not a 404, for whoever opens the service's address. */
export function indexRoute(app: FastifyInstance, links: IndexLinks): void {
  app.get('/', { schema: indexSchema }, async () => ({
    service: 'otp-service',
    docs: '/docs',
    openapi: '/openapi.json',
    health: '/healthz',
    ready: '/readyz',
    ...(links.console && { console: '/console' }),
    ...(links.devInbox && { devInbox: '/dev/inbox' }),
  }));
}
