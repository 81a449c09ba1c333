import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allows, requiredScopes, type Operation } from '../domain/scopes.js';
import type { AccessGrant, TokenService } from '../oauth/token-service.js';
import type { QuotaLimiter } from '../domain/quota-limiter.js';
import { sendError } from './envelope.js';
import { queryParameterNames } from './query-parameters.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation a /v1 route performs, naming the scopes it needs. */
    operation?: Operation;
  }
  interface FastifyRequest {
    /** Set by the auth hook on every /v1 route that reaches its handler. */
    grant: AccessGrant | null;
  }
}

export interface AuthHookDeps {
  readonly tokens: TokenService;
  /** Requests per client per second, exact across instances; null when the limit is off. */
  readonly clientRate: QuotaLimiter | null;
}

const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Authenticates the bearer token, checks the route's scope and the client's request rate. */
export function registerAuthHook(app: FastifyInstance, deps: AuthHookDeps): void {
  app.decorateRequest('grant', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    // RFC 6750 2.3 allows a token in the URL but says not to: URLs end up in logs and histories. It is refused
    // whatever the Authorization header says, so a client that leaks its token this way finds out at once.
    if (queryParameterNames(request.url).has('access_token')) {
      return sendError(reply, 'VALIDATION_ERROR', {
        message: 'Send the access token in the Authorization header, not in the URL',
        details: [{ field: 'access_token', issue: 'must not be in the query string; use Authorization: Bearer' }],
      });
    }
    const header = request.headers.authorization;
    if (!header) {
      reply.header('www-authenticate', 'Bearer');
      return sendError(reply, 'UNAUTHORIZED');
    }
    const token = bearerPattern.exec(header)?.[1];
    const grant = token ? await deps.tokens.authenticate(token) : null;
    if (!grant) {
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
      return sendError(reply, 'UNAUTHORIZED', { message: 'The access token is malformed, expired or revoked' });
    }
    const operation = request.routeOptions.config.operation;
    if (!operation) throw new Error(`route ${request.routeOptions.url ?? ''} names no operation`);
    if (!allows(grant.scopes, operation)) {
      const needed = requiredScopes[operation].join(' ');
      reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${needed}"`);
      return sendError(reply, 'INSUFFICIENT_SCOPE');
    }
    const limiter = deps.clientRate;
    if (limiter && !(await limiter.tryAcquire(`client:${grant.clientId}`))) {
      return sendError(reply, 'RATE_LIMITED', { retryAfterSeconds: Math.max(1, Math.ceil(limiter.msToNextWindow() / 1000)) });
    }
    request.grant = grant;
    return undefined;
  });
}

/** The grant of a request that passed the auth hook. */
export function grantOf(request: FastifyRequest): AccessGrant {
  if (!request.grant) throw new Error('route reached without the auth hook');
  return request.grant;
}
