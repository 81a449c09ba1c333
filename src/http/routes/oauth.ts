import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { knownScopes } from '../../domain/scopes.js';
import { UnavailableError } from '../../domain/unavailable.js';
import { sendError } from '../envelope.js';
import { topLevelKeys } from '../json-keys.js';
import { queryParameterNames } from '../query-parameters.js';
import { OAuthError, parseBasic, type TokenEndpoint, type TokenParams } from '../../oauth/token-endpoint.js';
import type { IssuedToken } from '../../oauth/token-service.js';
import { documentedTokenRequest, metadataResponses, rfcTokenResponses, tokenResponses } from './oauth-schemas.js';

const tokenSchema = {
  operationId: 'issueToken',
  summary: 'Get an access token',
  description:
    'The client credentials grant. The client authenticates with `client_id` and `client_secret` in the body or with HTTP Basic (RFC 6749 2.3.1), not both. ' +
    'The answer carries `accessToken`, `accessTokenExpiresAt` and `scope` (an array), and the RFC 6749 fields beside them. ' +
    'Errors are RFC 6749 5.2 bodies. Repeated failed authentication for one client id from one address is slowed down (429).',
  tags: ['Authentication'],
  response: tokenResponses,
} as const;

const rfcTokenSchema = {
  operationId: 'issueTokenRfc6749',
  summary: 'Get an access token (RFC 6749 answer)',
  description:
    'The same grant as `POST /oauth/token`, answered in the pure RFC 6749 shape (`scope` a space-separated string), for off-the-shelf OAuth clients; ' +
    '`/.well-known/oauth-authorization-server` names it as the token endpoint.',
  tags: ['Authentication'],
  response: rfcTokenResponses,
} as const;

const metadataSchema = {
  operationId: 'authorizationServerMetadata',
  summary: 'OAuth 2.0 authorization server metadata',
  description:
    'RFC 8414 metadata, so that OAuth clients find the token endpoint through discovery. The issuer is PUBLIC_BASE_URL; when it is unset, the origin the request names (then not cacheable).',
  tags: ['Authentication'],
  response: metadataResponses,
} as const;

/** The token endpoints parse their body by hand (RFC 6749 rules); the reference shows it all the same. */
const tokenRouteConfig = { documentedBody: documentedTokenRequest.content };


export interface OAuthRouteDeps {
  readonly tokenEndpoint: TokenEndpoint;
  /** Issuer from settings; when null it is derived from the request's host. */
  readonly publicBaseUrl: string | null;
}

/** POST /oauth/token (seed shape), POST /oauth2/token (RFC 6749 shape), RFC 8414 metadata. */
export async function oauthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): Promise<void> {
  // Scoped to this plugin: the token endpoints read forms (and JSON) into name -> every value given.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    // No prototype: a parameter named `constructor` or `__proto__` must be a parameter like any other.
    const params: Record<string, string[]> = Object.create(null);
    for (const [name, value] of new URLSearchParams(String(body))) (params[name] ??= []).push(value);
    done(null, params);
  });
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(body));
    } catch {
      done(new OAuthError('invalid_request', 'The request body is not valid JSON', 400), undefined);
      return;
    }
    try {
      done(null, jsonParams(parsed, topLevelKeys(String(body))));
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)), undefined);
    }
  });
  app.setErrorHandler((error: FastifyError | OAuthError | UnavailableError, request, reply) => oauthError(error, request, reply));

  const issue = async (request: FastifyRequest): Promise<IssuedToken> => {
    if (!request.body) throw new OAuthError('invalid_request', 'Send the parameters as a form body', 400);
    return deps.tokenEndpoint.handle({
      params: request.body as TokenParams,
      basic: parseBasic(request.headers.authorization),
      address: request.ip,
    });
  };

  app.post('/oauth/token', { schema: tokenSchema, config: tokenRouteConfig, onRequest: refuseParametersInUrl }, async (request, reply) => {
    const token = await issue(request);
    noStore(reply);
    return {
      accessToken: token.accessToken,
      accessTokenExpiresAt: token.expiresAt.toISOString(),
      scope: token.scopes,
      access_token: token.accessToken,
      token_type: 'Bearer',
      expires_in: token.expiresIn,
    };
  });

  app.post('/oauth2/token', { schema: rfcTokenSchema, config: tokenRouteConfig, onRequest: refuseParametersInUrl }, async (request, reply) => {
    const token = await issue(request);
    noStore(reply);
    return {
      access_token: token.accessToken,
      token_type: 'Bearer',
      expires_in: token.expiresIn,
      scope: token.scopes.join(' '),
    };
  });

  app.get('/.well-known/oauth-authorization-server', { schema: metadataSchema }, async (request, reply) => {
    let issuer = deps.publicBaseUrl;
    if (issuer === null) {
      // Derived from what the caller wrote: only a well-formed origin, and never cached for other callers.
      issuer = requestOrigin(request.protocol, request.host);
      if (issuer === null) {
        return sendError(reply, 'BAD_REQUEST', {
          message: 'The Host header is not a well-formed host[:port] (the operator can set PUBLIC_BASE_URL)',
        });
      }
      noStore(reply);
    }
    return {
      issuer,
      token_endpoint: `${issuer}/oauth2/token`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: knownScopes,
      response_types_supported: [],
    };
  });
}

const hostLabel = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** A DNS name or IPv4 address, or a bracketed IPv6 address, with an optional port. */
const hostPattern = new RegExp(`^(?:${hostLabel}(?:\\.${hostLabel})*|\\[[0-9A-Fa-f:.]{2,45}\\])(?::(\\d{1,5}))?$`);

/** The origin a request names (Host, or X-Forwarded-* behind a trusted proxy), or null when it is not well-formed. */
export function requestOrigin(protocol: string, host: string): string | null {
  if (protocol !== 'http' && protocol !== 'https') return null;
  const match = host.length <= 260 ? hostPattern.exec(host) : null;
  if (!match || Number(match[1] ?? 0) > 65535) return null;
  return `${protocol}://${host}`;
}

function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** The parameters the token endpoint reads; other JSON fields are ignored (contract 1). */
const tokenParamNames = new Set(['grant_type', 'scope', 'client_id', 'client_secret']);

/**
 * RFC 6749 2.3.1: client credentials MUST NOT be in the request URI (URLs end up in logs, proxies and
 * histories). A token parameter in the query string is refused, naming it, before the body is read.
 */
function refuseParametersInUrl(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const named = [...queryParameterNames(request.url)].filter((name) => tokenParamNames.has(name) || name === 'access_token');
  if (named.length > 0) {
    done(new OAuthError('invalid_request', `Send ${named.join(', ')} in the request body, not in the URL`, 400));
    return;
  }
  done();
}

/**
 * A JSON token request as name -> values; a token parameter that is not a string is refused. A key given twice
 * keeps both (JSON.parse keeps only the last), so a repeated parameter is refused as in a form.
 */
function jsonParams(body: unknown, keys: readonly string[]): TokenParams {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_request', 'The JSON body must be an object', 400);
  }
  const params: Record<string, string[]> = Object.create(null);
  for (const [name, value] of Object.entries(body)) {
    if (!tokenParamNames.has(name)) continue;
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} must be a string`, 400);
    params[name] = keys.filter((key) => key === name).map(() => value);
  }
  return params;
}

function oauthError(error: FastifyError | OAuthError | UnavailableError, request: FastifyRequest, reply: FastifyReply) {
  let oauth: OAuthError;
  if (error instanceof UnavailableError) {
    // RFC 6749 names this case for the authorization endpoint (4.1.2.1); the token endpoint borrows it.
    request.log.warn({ reason: error.message }, 'database unavailable at the token endpoint');
    noStore(reply);
    reply.header('retry-after', String(error.retryAfterSeconds));
    return reply.code(503).send({ error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; try again later' });
  }
  if (error instanceof OAuthError) {
    oauth = error;
  } else if (error.statusCode !== undefined && error.statusCode < 500) {
    const description =
      error.statusCode === 415
        ? 'Send the parameters as application/x-www-form-urlencoded'
        : error.statusCode === 413
          ? 'The request body is too large'
          : 'The request is malformed';
    // RFC 6749's error body, with HTTP's own status for a body over the limit.
    oauth = new OAuthError('invalid_request', description, error.statusCode === 413 ? 413 : 400, error.code);
  } else {
    request.log.error({ err: error }, 'unexpected error at the token endpoint');
    return reply.code(500).send({ error: 'server_error', error_description: 'Internal error' });
  }
  if (oauth.detail) request.log.info({ oauthError: oauth.code, detail: oauth.detail }, 'token request refused');
  if (oauth.status === 401 && oauth.basic) reply.header('www-authenticate', 'Basic realm="otp-service"');
  if (oauth.retryAfterSeconds !== undefined) reply.header('retry-after', String(oauth.retryAfterSeconds));
  noStore(reply);
  return reply.code(oauth.status).send({ error: oauth.code, error_description: oauth.description });
}
