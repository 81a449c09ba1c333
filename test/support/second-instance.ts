import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { cryptoRandom } from '../../src/domain/random.js';
import { buildApp } from '../../src/http/app.js';
import { appDeps } from '../../src/server.js';
import { createServices, type Services } from '../../src/services.js';
import type { Harness } from './harness.js';

/**
 * A second instance of the service on the harness's PostgreSQL database and clock, with these settings, for the
 * limits that must hold across instances; it is closed after `use`, however that ends.
 */
export async function withSecondInstance<T>(
  h: Harness,
  env: Record<string, string>,
  use: (other: { readonly app: FastifyInstance; readonly services: Services }) => Promise<T>,
): Promise<T> {
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: h.config.DATABASE_URL ?? '', CLIENT_RATE_LIMIT_PER_SECOND: '0', ...env });
  const services = await createServices(config, pino({ level: 'silent' }), h.clock, cryptoRandom);
  try {
    const app = await buildApp(appDeps(services));
    try {
      return await use({ app, services });
    } finally {
      await app.close();
    }
  } finally {
    await services.sendWorker.stop();
    await services.webhookWorker.close();
    await services.providers.stop();
    await services.db.close();
  }
}
