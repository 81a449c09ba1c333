import { knownScopes } from '../../domain/scopes.js';
import { errorResponses } from '../error-responses.js';

/**
 * Schemas of the token endpoints and the OAuth metadata. The response schemas serialize the answers; the
 * request body is documentation only (see `documentedBody`), because RFC 6749 asks more of it than a schema
 * says: a repeated parameter is refused, and the client may authenticate with HTTP Basic instead.
 */

const example = {
  accessToken: 'eyJhbGciOiJFZERTQSIsImtpZCI6IjIwMjYtMTEtMjEifQ.eyJzdWIiOiIuLi4ifQ.c2lnbmF0dXJl',
  expiresAt: '2026-11-21T10:30:00.123Z',
};

const tokenRequestSchema = {
  type: 'object',
  required: ['grant_type'],
  properties: {
    grant_type: { type: 'string', enum: ['client_credentials'] },
    client_id: { type: 'string', description: 'With client_secret, unless the client authenticates with HTTP Basic (never both).' },
    client_secret: { type: 'string', description: 'Shown once when the client was created.' },
    scope: {
      type: 'string',
      description: 'Space-separated scopes, each one the client is registered for; all the client\'s scopes when absent.',
    },
  },
  examples: [{ grant_type: 'client_credentials', client_id: 'c5a0e3a2-7f55-4c8e-9d0b-5f1c2e3d4a6b', client_secret: '<CLIENT_SECRET>', scope: 'otp:send otp:verify' }],
} as const;

/** The token request's documentation: both bodies the endpoints read. */
export const documentedTokenRequest = {
  description:
    'A form (`application/x-www-form-urlencoded`, as RFC 6749 says) or a JSON object with the same fields. A parameter given twice, or the client authenticated both in the body and with `Authorization: Basic`, is `invalid_request`.',
  content: {
    'application/x-www-form-urlencoded': tokenRequestSchema,
    'application/json': tokenRequestSchema,
  },
} as const;

/** The RFC 6749 5.2 error body, and an example of each error the endpoints answer with at this status. */
function oauthError(description: string, cases: Record<string, string>, headers?: Record<string, object>) {
  return {
    type: 'object',
    description,
    required: ['error', 'error_description'],
    properties: {
      error: { type: 'string', enum: Object.keys(cases) },
      error_description: { type: 'string', description: 'Human-readable text.' },
    },
    ...(headers && { headers }),
    'x-examples': Object.fromEntries(Object.entries(cases).map(([error, text]) => [error, { value: { error, error_description: text } }])),
  };
}

const retryAfter = { 'Retry-After': { type: 'string', description: 'Seconds to wait.' } };

const tokenErrors = {
  400: oauthError(
    '`invalid_request`: a missing or repeated parameter, two authentication methods, parameters in the URL, or a body that is not a form or JSON. `unsupported_grant_type`: not `client_credentials`. `invalid_scope`: a scope the client is not registered for.',
    {
      invalid_request: 'Parameter given more than once: scope',
      unsupported_grant_type: 'Only the client_credentials grant is supported',
      invalid_scope: 'Scope not allowed for this client: lookup:request',
    },
  ),
  401: oauthError(
    '`invalid_client`: unknown client, wrong secret or disabled client. With `WWW-Authenticate: Basic` when the client used HTTP Basic.',
    { invalid_client: 'Client authentication failed' },
    { 'WWW-Authenticate': { type: 'string', description: 'Present when the client used HTTP Basic.' } },
  ),
  429: oauthError(
    '`slow_down`: too many failed authentications for this client id from this address.',
    { slow_down: 'Too many failed client authentications; retry later' },
    retryAfter,
  ),
  500: oauthError('`server_error`: anything unexpected (logged with the request id).', { server_error: 'Internal error' }),
  503: oauthError(
    '`temporarily_unavailable`: the database did not answer in time.',
    { temporarily_unavailable: 'The service is temporarily unavailable; try again later' },
    retryAfter,
  ),
  '4xx': oauthError('Another refusal, in the RFC 6749 error shape.', { invalid_request: 'The request is malformed' }),
} as const;

const noStore = {
  'Cache-Control': { type: 'string', description: '`no-store`' },
  Pragma: { type: 'string', description: '`no-cache`' },
};

const expiresIn = { type: 'integer', description: 'Seconds until the token expires (TOKEN_TTL_SECONDS).' } as const;

/** POST /oauth/token: the seed's fields (2.1) and the RFC 6749 ones that do not clash. */
export const tokenResponses = {
  200: {
    type: 'object',
    description: 'The access token, with the RFC 6749 fields beside it.',
    required: ['accessToken', 'accessTokenExpiresAt', 'scope', 'access_token', 'token_type', 'expires_in'],
    headers: noStore,
    properties: {
      accessToken: { type: 'string', description: 'The bearer token, opaque to the client.' },
      accessTokenExpiresAt: { type: 'string', description: 'ISO 8601 UTC with milliseconds.' },
      scope: { type: 'array', items: { type: 'string', enum: knownScopes }, description: 'The scopes granted.' },
      access_token: { type: 'string', description: 'The same token (RFC 6749).' },
      token_type: { type: 'string', enum: ['Bearer'] },
      expires_in: expiresIn,
    },
    'x-examples': {
      token: {
        value: {
          accessToken: example.accessToken,
          accessTokenExpiresAt: example.expiresAt,
          scope: ['otp:send', 'otp:verify'],
          access_token: example.accessToken,
          token_type: 'Bearer',
          expires_in: 3600,
        },
      },
    },
  },
  ...tokenErrors,
} as const;

/** POST /oauth2/token: pure RFC 6749, for off-the-shelf OAuth clients. */
export const rfcTokenResponses = {
  200: {
    type: 'object',
    description: 'The access token, RFC 6749 5.1.',
    required: ['access_token', 'token_type', 'expires_in', 'scope'],
    headers: noStore,
    properties: {
      access_token: { type: 'string', description: 'The bearer token, opaque to the client.' },
      token_type: { type: 'string', enum: ['Bearer'] },
      expires_in: expiresIn,
      scope: { type: 'string', description: 'The scopes granted, space-separated.' },
    },
    'x-examples': {
      token: { value: { access_token: example.accessToken, token_type: 'Bearer', expires_in: 3600, scope: 'otp:send otp:verify' } },
    },
  },
  ...tokenErrors,
} as const;

/** GET /.well-known/oauth-authorization-server (RFC 8414). */
export const metadataResponses = {
  200: {
    type: 'object',
    description: 'RFC 8414 authorization server metadata, naming /oauth2/token.',
    required: [
      'issuer',
      'token_endpoint',
      'grant_types_supported',
      'token_endpoint_auth_methods_supported',
      'scopes_supported',
      'response_types_supported',
    ],
    properties: {
      issuer: { type: 'string', description: 'PUBLIC_BASE_URL, or the origin the request named when it is unset.' },
      token_endpoint: { type: 'string' },
      grant_types_supported: { type: 'array', items: { type: 'string' } },
      token_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
      scopes_supported: { type: 'array', items: { type: 'string' } },
      response_types_supported: { type: 'array', items: { type: 'string' } },
    },
    'x-examples': {
      metadata: {
        value: {
          issuer: 'https://otp.example.com',
          token_endpoint: 'https://otp.example.com/oauth2/token',
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          scopes_supported: knownScopes,
          response_types_supported: [],
        },
      },
    },
  },
  ...errorResponses(['BAD_REQUEST']),
} as const;
