import type { FastifyInstance } from 'fastify';
import { v1ErrorHandler } from '../../http/error-handler.js';
import { accountRoutes } from './account-routes.js';
import { apiRoutes, type RunCommand } from './api-routes.js';
import { pageRoutes } from './pages.js';
import { consoleGuard, openPaths, sessionRoutes, type ConsoleSessionDeps } from './session-routes.js';

/** What the console's routes use (contract 16); absent from the app: /console is the contract's 404. */
export interface ConsoleRouteDeps extends ConsoleSessionDeps {
  /** Runs an operator command as the CLI does, audited under the operator's name. */
  readonly run: RunCommand;
  /** COST_CURRENCY: what the overview's spend is in (its figures are bare decimal strings). */
  readonly costCurrency: string;
  /** Where the built front end is (tests may point elsewhere). */
  readonly uiDir?: string;
}

/** The console: its pages, sign-in and sessions, and its JSON API, in a scope of their own. */
export async function consoleRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.setErrorHandler(v1ErrorHandler);
    // JSON only, as /v1.
    scope.removeContentTypeParser('text/plain');
    scope.decorateRequest('consoleSession', null);
    const guard = consoleGuard(deps, openPaths);
    scope.addHook('onRequest', async (request, reply) => {
      if ((request.routeOptions.url ?? '').startsWith('/console/api/')) return guard(request, reply);
      return undefined;
    });
    sessionRoutes(scope, deps);
    accountRoutes(scope, deps);
    apiRoutes(scope, deps.run, deps.costCurrency);
    pageRoutes(scope, deps.uiDir);
  });
}
