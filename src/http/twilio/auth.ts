import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { QuotaLimiter } from '../../domain/quota-limiter.js';
import { allows, type Operation } from '../../domain/scopes.js';
import { secretMatches, type Client } from '../../oauth/client.js';
import { parseBasic, type FailureCounter } from '../../oauth/token-endpoint.js';
import { sendTwilioError } from './errors.js';
import { clientIdOfUser } from './sids.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation a /v2 route performs: the client must be registered for one of its scopes. */
    twilioOperation?: Operation;
  }
  interface FastifyRequest {
    /** Set by the /v2 auth hook on every route that reaches its handler. */
    twilioClient: Client | null;
  }
}

export interface TwilioAuthDeps {
  readonly clients: { get(id: string): Promise<Client | null> };
  /** The token endpoint's count of failed authentications: a guess here counts there, and the other way round. */
  readonly authFailures: FailureCounter;
  readonly maxAuthFailures: number;
  readonly clientRate: QuotaLimiter | null;
}

const unknownClientHash = '0'.repeat(64);

/**
 * Twilio's authentication (contract 15): HTTP Basic with the client's id or account sid as user and its secret
 * as password, compared as the token endpoint compares it (a hash, in constant time, also for an unknown
 * client), and repeated failures for one client from one address slowed down there and here alike.
 */
export function registerTwilioAuth(app: FastifyInstance, deps: TwilioAuthDeps): void {
  app.decorateRequest('twilioClient', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const basic = parseBasic(request.headers.authorization);
    if (basic === null || basic === 'malformed' || basic.id === '' || basic.secret === '') {
      reply.header('www-authenticate', 'Basic realm="Twilio API"');
      return sendTwilioError(reply, 20003);
    }
    const id = clientIdOfUser(basic.id);
    const failureKey = `auth:${id}|${request.ip}`;
    if (deps.authFailures.count(failureKey) >= deps.maxAuthFailures) {
      const retry = Math.max(1, Math.ceil(deps.authFailures.msToNextWindow() / 1000));
      return sendTwilioError(reply, 20429, { message: 'Too many failed authentications; retry later', retryAfterSeconds: retry });
    }
    const client = await deps.clients.get(id);
    const matches = secretMatches(basic.secret, client?.secretHash ?? unknownClientHash);
    if (!client || !matches || client.disabledAt) {
      deps.authFailures.hit(failureKey);
      reply.header('www-authenticate', 'Basic realm="Twilio API"');
      return sendTwilioError(reply, 20003);
    }
    const operation = request.routeOptions.config.twilioOperation;
    if (operation && !allows(client.scopes, operation)) return sendTwilioError(reply, 20403);
    const limiter = deps.clientRate;
    if (limiter && !(await limiter.tryAcquire(`client:${client.id}`))) {
      return sendTwilioError(reply, 20429, { retryAfterSeconds: Math.max(1, Math.ceil(limiter.msToNextWindow() / 1000)) });
    }
    request.twilioClient = client;
    return undefined;
  });
}

/** The client of a request that passed the /v2 auth hook. */
export function twilioClientOf(request: FastifyRequest): Client {
  if (!request.twilioClient) throw new Error('route reached without the /v2 auth hook');
  return request.twilioClient;
}
