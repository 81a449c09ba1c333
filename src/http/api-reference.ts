import fs from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { OpenAPIV3_1 } from 'openapi-types';
import { webhookPayload } from '../domain/events.js';
import { knownScopes, requiredScopes, type Scope } from '../domain/scopes.js';
import { exampleVerification } from './api-examples.js';
import { apiOverview } from './api-overview.js';
import { webhookEventSchema } from './webhook-event-schema.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The request bodies of a route that parses its body by hand (no schema validates it), by content type:
     * the reference shows them as its request body.
     */
    documentedBody?: Readonly<Record<string, object>>;
  }
}

/** What each scope allows, for the security scheme. */
const scopeDescriptions: Record<Scope, string> = {
  'otp:send': "Create, resend and cancel verifications; read them, their webhook deliveries and the client's stats.",
  'otp:verify': "Check codes; read verifications, their webhook deliveries and the client's stats.",
  'lookup:request': 'Look numbers up.',
  'lookup:status': 'Read lookups.',
  'deposit:request': 'Known scope with no operation.',
  'one-time-password-sms:send-validate': "CAMARA's one-time-password-sms API: send a code in the caller's own text, and validate it.",
};

/**
 * The Content-Security-Policy of /docs: the renderer's own scripts, styles and images, and fetches of the
 * document and of "Try it out" to this origin; nothing inline, nothing from elsewhere, no framing.
 */
export const docsContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function packageVersion(): string {
  // src/http and dist/http are both two levels below the package root.
  const parsed: unknown = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const version = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'version') : undefined;
  return typeof version === 'string' ? version : '0.0.0';
}

/**
 * Adds to each operation what the route's options say beyond its schema: the scopes the auth hook asks for
 * (one security requirement per scope that is enough; none for a public route), and a body parsed by hand.
 */
function documentRoute({ schema: given, url, route }: { schema: FastifySchema | undefined; url: string; route: RouteOptions }) {
  // A route declared without a schema still gets its operation documented (and the API test asks for a summary).
  const schema: FastifySchema = given ?? {};
  const operation = route.config?.operation;
  const scopes: readonly Scope[] = operation ? requiredScopes[operation] : [];
  const documentedBody = route.config?.documentedBody;
  const scopeNote = scopes.length > 0 ? `\n\nScope: ${scopes.map((s) => `\`${s}\``).join(' or ')}.` : '';
  return {
    url,
    schema: {
      ...schema,
      ...(schema.description !== undefined && { description: schema.description + scopeNote }),
      // A route that names its own scheme (the Twilio-shaped /v2's HTTP Basic) keeps it.
      security: schema.security ?? scopes.map((scope) => ({ oauth2: [scope] })),
      ...(documentedBody && {
        body: { content: Object.fromEntries(Object.entries(documentedBody).map(([type, body]) => [type, { schema: body }])) },
      }),
    },
  };
}

/** The document's parts that no route schema holds. */
const document: Partial<OpenAPIV3_1.Document> = {
  openapi: '3.1.0',
  info: {
    title: 'otp-service',
    version: packageVersion(),
    summary: 'Phone-number verification: SMS and dropped-call codes, OAuth 2.0 client credentials, signed webhooks.',
    description: apiOverview,
    license: { name: 'MIT', identifier: 'MIT' },
  },
  tags: [
    { name: 'Verifications', description: 'Create a verification, read it, check its code, send it again or cancel it.' },
    { name: 'Number lookup', description: 'Line type, original carrier and time zones of a number, from metadata on the machine.' },
    { name: 'Stats', description: "The client's traffic per day and country: sends, deliveries and verifications." },
    { name: 'Webhooks', description: 'What became of the webhook deliveries of a verification.' },
    { name: 'Authentication', description: 'OAuth 2.0 client credentials.' },
    { name: 'Health', description: 'For load balancers and orchestrators.' },
    { name: 'Operations', description: 'For operators: this instance\'s Prometheus metrics.' },
    {
      name: 'Provider callbacks',
      description: 'Delivery receipts from the SMS and call providers, authenticated by each provider\'s own signature; not for API clients.',
    },
    {
      name: 'Twilio Verify v2 (drop-in)',
      description:
        "Twilio Verify's v2 API, the subset code written against Twilio's SDKs uses, over the same verifications as /v1: HTTP Basic with the client's account sid (`AC` + its id's hex digits) and secret.",
    },
    {
      name: 'CAMARA one-time-password-sms (drop-in)',
      description:
        "GSMA Open Gateway's CAMARA one-time-password-sms v1 (description 1.1.1): send a code in your own text, validate it; bearer tokens with scope `one-time-password-sms:send-validate`.",
    },
    {
      name: 'Relays for auth servers (drop-in)',
      description:
        "For auth servers that make their own codes (Supabase Auth, Logto): the service only delivers them, under a client, authenticated with the client's hook secret.",
    },
    { name: 'Reference', description: 'This document.' },
  ],
  components: {
    schemas: { WebhookEvent: webhookEventSchema },
    securitySchemes: {
      twilioBasic: {
        type: 'http',
        scheme: 'basic',
        description: "Twilio's authentication: the client's id or account sid (`AC` + the id's 32 hex digits) as user, its secret as password.",
      },
      oauth2: {
        type: 'oauth2',
        description:
          'OAuth 2.0 client credentials. `POST /oauth/token` answers with `accessToken`, `accessTokenExpiresAt` and `scope`, `POST /oauth2/token` pure RFC 6749 (for OAuth libraries); send the token as `Authorization: Bearer <token>`.',
        flows: {
          clientCredentials: {
            tokenUrl: '/oauth2/token',
            scopes: Object.fromEntries(knownScopes.map((s) => [s, scopeDescriptions[s]])),
          },
        },
      },
    },
  },
  webhooks: {
    verificationEvent: {
      post: {
        summary: 'A verification changed state',
        description:
          'Posted to the verification\'s `webhookUrl` when it becomes `SUCCESS`, `FAILED` or `EXPIRED`, at least once (the `webhook-id` is the same on every retry). ' +
          'Signed with the Standard Webhooks scheme: `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the client\'s `whsec_...` secret (the `standardwebhooks` package verifies it). ' +
          'Any 2xx within WEBHOOK_TIMEOUT_MS is a delivery; anything else is retried after WEBHOOK_RETRY_DELAYS, each attempt re-signed.',
        parameters: [
          { in: 'header', name: 'webhook-id', required: true, schema: { type: 'string' }, description: 'The event id, the same on every retry.' },
          { in: 'header', name: 'webhook-timestamp', required: true, schema: { type: 'string' }, description: 'Unix seconds of this attempt.' },
          { in: 'header', name: 'webhook-signature', required: true, schema: { type: 'string' }, description: 'Space-separated `v1,<base64>` signatures.' },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/WebhookEvent' },
              example: webhookPayload('action.otp.success', { ...exampleVerification, status: 'SUCCESS', counter: 1 }),
            },
          },
        },
        responses: {
          '2XX': { description: 'Delivered.' },
          default: { description: 'Not delivered: retried (a `Retry-After` on 429 or 503 is honoured up to twice the delay).' },
        },
      },
    },
  },
};

/**
 * The API reference: the OpenAPI 3.1 document generated from the routes' schemas (registered before any
 * route, so that it sees them all), served at GET /openapi.json, and rendered at GET /docs from assets served
 * here (it works offline).
 */
export async function registerApiReference(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: document,
    transform: documentRoute,
    // Shared schemas (app.addSchema) become components named by their $id, e.g. VerificationRecord.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });

  let served: string | null = null;
  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This document',
        description: 'The OpenAPI 3.1 document of the API, generated from the schemas that validate the requests and serialize the answers.',
        tags: ['Reference'],
        response: { 200: { type: 'object', description: 'An OpenAPI 3.1 document.' } },
      },
    },
    async (_request, reply) => {
      // Sent as text: the document is fixed once the routes are in, and a string bypasses the response serializer.
      served ??= JSON.stringify(app.swagger());
      return reply.type('application/json; charset=utf-8').send(served);
    },
  );

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    theme: { title: 'otp-service API reference' },
    // BaseLayout: no top bar, whose logo carries an inline <style> the policy would have to allow, and whose
    // URL box would load other documents.
    uiConfig: { layout: 'BaseLayout', deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0, displayOperationId: false },
    staticCSP: docsContentSecurityPolicy,
  });
}
