import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { LookupService } from '../domain/lookup-service.js';
import type { StatsService } from '../domain/stats-service.js';
import type { SilentService } from '../domain/silent-service.js';
import type { Verification } from '../domain/verification.js';
import type { VerificationService } from '../domain/verification-service.js';
import { registerApiReference } from './api-reference.js';
import { registerAuthHook, type AuthHookDeps } from './auth-hook.js';
import { sendError } from './envelope.js';
import { sharedRecordSchema } from './record-schema.js';
import { v1ErrorHandler } from './error-handler.js';
import { callbackRoutes, type CallbackRouteDeps } from './routes/callbacks.js';
import { devInboxRoutes, type DevInboxRouteDeps } from './routes/dev-inbox.js';
import { indexRoute } from './routes/index.js';
import { healthRoutes } from './routes/health.js';
import { lookupRoutes } from './routes/lookup.js';
import { ProbeQuietLogController } from './probe-logging.js';
import { oauthRoutes, type OAuthRouteDeps } from './routes/oauth.js';
import { otpRoutes } from './routes/otp.js';
import type { WebhookDestinations } from '../webhooks/destination-policy.js';
import type { PersonalDataStore } from '../domain/personal-data.js';
import { otpLifecycleRoutes } from './routes/otp-lifecycle.js';
import { silentRoutes } from './routes/silent.js';
import { silentCamaraRoutes } from './routes/silent-camara.js';
import { statsRoutes } from './routes/stats.js';
import { camaraRoutes } from './camara/routes.js';
import { relayRoutes, type RelayRouteDeps } from './relays/routes.js';
import { twilioRoutes, type TwilioRouteDeps } from './twilio/routes.js';
import { consoleRoutes, type ConsoleRouteDeps } from '../console/http/routes.js';
import { applyConnectionCap, clientErrorHandler, serverOptions, type ServerLimits } from './server-limits.js';

/** Told of every answer, and serves the metrics at GET /metrics (contract 12); absent: no /metrics. */
export interface HttpObserver {
  answered(method: string, route: string, status: number, seconds: number): void;
  render(): Promise<{ readonly contentType: string; readonly body: string }>;
}

export interface AppDeps extends AuthHookDeps, OAuthRouteDeps {
  readonly logger: FastifyBaseLogger;
  readonly verifications: VerificationService;
  /** Silent verification's proofs (contract 19); absent: POST /v1/otp/{id}/silent is a 404. */
  readonly silent?: SilentService;
  /** A SILENT verification's check URL (SILENT_PROVIDER=camara), null for others; absent: none. */
  readonly silentCheckUrl?: (v: Verification) => string | null;
  /** Digits of a code (OTP_LENGTH): a caller's own message text (CAMARA's `message`) is checked with one in it. */
  readonly codeLength: number;
  /** COST_CURRENCY: what a record's cost is in. */
  readonly costCurrency: string;
  /** Erasure of a person's data (DELETE /v1/otp/{id}). */
  readonly personalData: PersonalDataStore;
  /** Where webhooks may go (WEBHOOK_ALLOWED_NETWORKS): a create naming a destination never delivered to is a 400. */
  readonly webhookDestinations: WebhookDestinations;
  readonly lookups: LookupService;
  /** The clients' traffic figures (GET /v1/stats). */
  readonly stats: StatsService;
  readonly ready: () => Promise<boolean>;
  /** Fastify's trustProxy: false, the hop count, or the proxies' addresses (never `true`, which trusts any caller). */
  readonly trustProxy: false | number | string;
  /** Time-outs and the connection cap of the HTTP server (contract 6). */
  readonly limits: ServerLimits;
  /** Extra /v1 routes (behind the same auth hook), e.g. the webhook delivery log. */
  readonly extraV1Routes?: (app: FastifyInstance) => void;
  /** Providers' delivery callbacks; absent: no /callbacks routes. */
  readonly callbacks?: CallbackRouteDeps;
  readonly metrics?: HttpObserver;
  /** Twilio Verify v2 at /v2 (contract 15); absent: no /v2 routes. */
  readonly twilio?: TwilioRouteDeps;
  /** The relays for auth servers (contract 15); absent: no /hooks routes. */
  readonly relays?: RelayRouteDeps;
  /** The development inbox (contract 12); absent: /dev/inbox is a 404. */
  readonly devInbox?: DevInboxRouteDeps;
  /** The operator console (contract 16, CONSOLE=true); absent: /console is a 404. */
  readonly console?: ConsoleRouteDeps;
}

const metricsSchema = {
  operationId: 'metrics',
  summary: 'Prometheus metrics',
  description:
    'This instance\'s metrics in the Prometheus text format: requests by route and status; verifications created and ended by type, country and outcome; ' +
    'sends by channel, provider and outcome; receipt latency; webhook deliveries by outcome and lag; and the process\'s own. No token, and no secret in it: ' +
    'block it at your reverse proxy if it should not be public.',
  tags: ['Operations'],
  response: { 200: { description: 'The exposition text.', content: { 'text/plain': { schema: { type: 'string' } } } } },
} as const;

/** The largest request body accepted (contract 5: 413 beyond). */
export const bodyLimit = 16 * 1024;

const requestIdPattern = /^[A-Za-z0-9._-]{1,64}$/;

/** The HTTP application, not listening: main.ts listens, tests use inject(). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit,
    ...serverOptions(deps.limits),
    clientErrorHandler: clientErrorHandler(deps.logger),
    // A hop count trusts that many proxies nearest the service (hop 0 is the socket's peer), never the caller's own entries.
    trustProxy: typeof deps.trustProxy === 'number' ? trustHops(deps.trustProxy) : deps.trustProxy,
    // A caller's request id is kept when it is safe to log; otherwise each request gets a fresh one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { coerceTypes: false, allErrors: true, removeAdditional: false } },
    return503OnClosing: true,
    // Health probes are logged at debug; every other request at info, as Fastify does.
    logController: new ProbeQuietLogController(),
    // A /v1 body with a __proto__ or constructor.prototype key is parsed with those keys dropped (contract 1:
    // unknown fields are ignored), not refused as invalid JSON; they never reach an object's prototype.
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    // A path that is not valid percent-encoding names no route: the contract's 404, not Fastify's own 400 body.
    frameworkErrors: (_error, request, reply) => {
      reply.header('x-request-id', request.id);
      return sendError(reply, 'NOT_FOUND', { message: 'No such route' });
    },
  });
  applyConnectionCap(app.server, deps.limits);
  // A callback hook, not an async one: it runs on every request, and a promise per request is measurable.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  app.addSchema(sharedRecordSchema);
  // First: it documents the routes registered after it.
  await registerApiReference(app);
  const { metrics } = deps;
  if (metrics) {
    app.addHook('onResponse', (request, reply, done) => {
      // The route's template (/v1/otp/:id), never the path itself: ids would make a label without bound.
      metrics.answered(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    app.get('/metrics', { schema: metricsSchema }, async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply.type(contentType).header('cache-control', 'no-store').send(body);
    });
  }
  healthRoutes(app, deps.ready);
  indexRoute(app, { console: deps.console !== undefined, devInbox: deps.devInbox !== undefined });
  if (deps.devInbox) devInboxRoutes(app, deps.devInbox);
  if (deps.console) await consoleRoutes(app, deps.console);
  await app.register(oauthRoutes, deps);
  const { callbacks } = deps;
  if (callbacks) {
    await app.register(async (scope) => {
      scope.setErrorHandler(v1ErrorHandler);
      await callbackRoutes(scope, callbacks);
    });
  }
  const { twilio } = deps;
  if (twilio) await app.register(async (v2) => twilioRoutes(v2, twilio), { prefix: '/v2' });
  const { relays } = deps;
  if (relays) await app.register(async (hooks) => relayRoutes(hooks, relays));
  // The device's side of CAMARA Number Verification (contract 19): its check URL and the operator's callback.
  const { silent } = deps;
  if (silent && deps.silentCheckUrl) await app.register(async (device) => silentCamaraRoutes(device, silent));
  // CAMARA's one-time-password-sms v1 (contract 15), over the same services as /v1.
  await app.register(async (camara) => camaraRoutes(camara, deps), { prefix: '/one-time-password-sms/v1' });
  await app.register(async (v1) => {
    v1.setErrorHandler(v1ErrorHandler);
    // Fastify parses text/plain by default; /v1 takes JSON only (contract 5: 415 for a body that is not JSON).
    v1.removeContentTypeParser('text/plain');
    registerAuthHook(v1, deps);
    otpRoutes(v1, deps.verifications, deps.webhookDestinations, deps.costCurrency, deps.silentCheckUrl);
    otpLifecycleRoutes(v1, deps.verifications, deps.personalData, deps.costCurrency);
    if (deps.silent) silentRoutes(v1, deps.silent, deps.costCurrency);
    lookupRoutes(v1, deps.lookups);
    statsRoutes(v1, deps.stats);
    deps.extraV1Routes?.(v1);
  });

  app.setNotFoundHandler((_request, reply) => sendError(reply, 'NOT_FOUND', { message: 'No such route' }));
  app.setErrorHandler(v1ErrorHandler);
  return app;
}

function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}
