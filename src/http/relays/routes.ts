import { timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../domain/ports.js';
import type { UnavailableError } from '../../domain/unavailable.js';
import type { VerificationService } from '../../domain/verification-service.js';
import type { Client } from '../../oauth/client.js';
import { codeOf, relayError, relayErrorBody } from './relay-errors.js';
import { relayOnce, relaySend, type RelayRefusal } from './relay-send.js';
import { relayFutureToleranceSeconds, type RelayRequests } from '../../domain/relay-requests.js';
import { zitadelRelay } from './zitadel.js';
import { activeSecrets } from '../../webhooks/signer.js';

export interface RelayRouteDeps {
  readonly verifications: VerificationService;
  readonly clients: { get(id: string): Promise<Client | null> };
  readonly clock: Clock;
  /** Signed requests seen, so that a replayed copy sends nothing. */
  readonly requests: RelayRequests;
}

interface HookParams {
  hookId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body as it came, for the signature check. */
    rawBody: string | null;
  }
}

const hookParams = { type: 'object', required: ['hookId'], properties: { hookId: { type: 'string' } } } as const;
const tags = ['Relays for auth servers (drop-in)'];

/** Supabase's error shape, `{ error: { http_code, message } }` (its Send SMS Hook docs). */
const supabaseError = {
  type: 'object',
  properties: { error: { type: 'object', properties: { http_code: { type: 'integer' }, message: { type: 'string' } } } },
} as const;
const logtoError = relayErrorBody;

/**
 * Supabase Auth's Send SMS Hook body, as supabase/auth `internal/hooks/v0hooks/v0hooks.go` declares it
 * (SendSMSInput: `user` the whole user, `sms` { otp, sms_type }); only what is read here is described.
 */
const supabaseBody = {
  type: 'object',
  required: ['user', 'sms'],
  properties: {
    user: { type: 'object', required: ['phone'], properties: { phone: { type: 'string' } }, additionalProperties: true },
    sms: { type: 'object', required: ['otp'], properties: { otp: { type: 'string' } }, additionalProperties: true },
  },
  additionalProperties: true,
} as const;

/**
 * Logto's HTTP SMS connector body, as logto-io/logto `packages/connectors/connector-http-sms/src/index.ts` posts
 * it: JSON `{ to, type, payload }` with the connector's `authorization` setting as the Authorization header.
 */
const logtoBody = {
  type: 'object',
  required: ['to', 'payload'],
  properties: {
    to: { type: 'string' },
    type: { type: 'string' },
    payload: { type: 'object', required: ['code'], properties: { code: { type: 'string' }, locale: { type: 'string' } }, additionalProperties: true },
  },
  additionalProperties: true,
} as const;

/** The code keys of Kratos' SMS template models (`ctx.template_data`), one per flow. */
const kratosCodeKeys = ['login_code', 'registration_code', 'verification_code', 'recovery_code'] as const;
type KratosCodes = Partial<Record<(typeof kratosCodeKeys)[number], string | null>>;

/**
 * Ory Kratos' HTTP courier posts what the operator's Jsonnet makes of `ctx` (`recipient`, `template_type`,
 * `template_data`); taken as ory/kratos ships its stub body (`courier/stub/request.config.mailer.jsonnet`: the codes
 * at the top level beside `recipient`) or with `template_data` passed whole (its SMS models carry `to` and the
 * flow's code key, as Kratos' own e2e tests read `ctx.template_data.login_code`).
 */
const kratosBody = {
  type: 'object',
  required: ['recipient'],
  properties: {
    recipient: { type: 'string' },
    template_type: { type: 'string' },
    template_data: { type: ['object', 'null'], additionalProperties: true },
  },
  additionalProperties: true,
} as const;

/**
 * The relays for auth servers that make their own codes (contract 15): each authenticated as its sender signs,
 * keyed with the client's hook secret, then one relayed send through the same VerificationService as /v1.
 * A refusal answers in the sender's own error shape, with the status /v1 would use.
 */
export async function relayRoutes(app: FastifyInstance, deps: RelayRouteDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  app.decorateRequest('rawBody', null);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = String(body);
    try {
      done(null, JSON.parse(String(body)));
    } catch {
      const err = new Error('The body is not valid JSON') as Error & { statusCode: number };
      err.statusCode = 400;
      done(err, undefined);
    }
  });

  /** The client a hook address names, unless it is unknown or disabled. */
  const clientOf = async (hookId: string): Promise<Client | null> => {
    const client = /^[0-9a-f-]{36}$/.test(hookId) ? await deps.clients.get(hookId) : null;
    return client && !client.disabledAt ? client : null;
  };
  /** The client a hook address names and the hook secrets it takes now (a rotated-out one for 24 h), if its relays are on. */
  const hookClient = async (hookId: string): Promise<{ client: Client; secrets: string[] } | null> => {
    const client = await clientOf(hookId);
    if (!client?.hookSecret) return null;
    const secrets = activeSecrets({ current: client.hookSecret, previous: client.previousHookSecret ?? null, previousExpiresAt: client.previousHookSecretExpiresAt ?? null }, deps.clock.now());
    return { client, secrets };
  };

  await app.register(async (zitadel) => zitadelRelay(zitadel, { verifications: deps.verifications, clock: deps.clock, requests: deps.requests, clientOf }));

  await app.register(async (supabase) => {
    const fail = (reply: FastifyReply, status: number, message: string, retryAfterSeconds?: number) => {
      if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
      return reply.code(status).send({ error: { http_code: status, message } });
    };
    supabase.setErrorHandler((error: FastifyError | UnavailableError, request, reply) =>
      relayError(error, request, reply, (status, message, retry) => fail(reply, status, message, retry)),
    );
    supabase.post<{ Params: HookParams; Body: { user: { phone: string }; sms: { otp: string } } }>(
      '/hooks/supabase/send-sms/:hookId',
      {
        schema: {
          operationId: 'relaySupabaseSendSms',
          summary: "Supabase Auth's Send SMS Hook",
          description:
            "Set as the Send SMS Hook's URI in Supabase Auth, with the client's hook secret (`otp-service clients hooks ID`): delivers `sms.otp` to `user.phone`. " +
            'Standard Webhooks signature; 200 `{}`; errors `{ error: { http_code, message } }`.',
          tags,
          security: [],
          params: hookParams,
          body: supabaseBody,
          response: { 200: { type: 'object', properties: {} }, 400: supabaseError, 401: supabaseError, 403: supabaseError, 429: supabaseError, 500: supabaseError, 503: supabaseError },
        },
      },
      async (request, reply) => {
        const hook = await hookClient(request.params.hookId);
        const now = deps.clock.now();
        if (!hook || !hook.secrets.some((secret) => signedBySupabase(secret, request))) return fail(reply, 401, 'Invalid signature');
        if (Number(request.headers['webhook-timestamp']) > now.getTime() / 1000 + relayFutureToleranceSeconds) {
          return fail(reply, 401, 'The signature is dated ahead of this server\'s clock');
        }
        // Standard Webhooks' webhook-id names the message: a copy of it within the signature's window sends nothing.
        const answer = await relayOnce(deps.requests, { clientId: hook.client.id, key: `supabase:${String(request.headers['webhook-id'])}`, now, sent: { status: 200 } }, () =>
          relaySend(deps.verifications, { clientId: hook.client.id, scopes: hook.client.scopes, phone: request.body.user.phone, code: request.body.sms.otp }),
        );
        if (answer.status !== 200) return fail(reply, answer.status, answer.message ?? '', answer.retryAfterSeconds);
        return {};
      },
    );
  });

  await app.register(async (logto) => {
    const fail = (reply: FastifyReply, refusal: RelayRefusal & { code: string }) => {
      if (refusal.retryAfterSeconds !== undefined) reply.header('retry-after', String(refusal.retryAfterSeconds));
      return reply.code(refusal.status).send({ code: refusal.code, message: refusal.message });
    };
    logto.setErrorHandler((error: FastifyError | UnavailableError, request, reply) =>
      relayError(error, request, reply, (status, message, retry) => fail(reply, { status, message, code: codeOf(status), ...(retry !== undefined && { retryAfterSeconds: retry }) })),
    );
    logto.post<{ Params: HookParams; Body: { to: string; type?: string; payload: { code: string; locale?: string } } }>(
      '/hooks/logto/sms/:hookId',
      {
        schema: {
          operationId: 'relayLogtoSms',
          summary: "Logto's HTTP SMS connector",
          description:
            "Set as the HTTP SMS connector's endpoint in Logto, with `Authorization: Bearer <hook secret>` (`otp-service clients hooks ID`): delivers `payload.code` to `to`.",
          tags,
          security: [],
          params: hookParams,
          body: logtoBody,
          response: { 204: { type: 'null', description: 'Sent.' }, 400: logtoError, 401: logtoError, 403: logtoError, 429: logtoError, 500: logtoError, 503: logtoError },
        },
      },
      async (request, reply) => {
        const hook = await hookClient(request.params.hookId);
        if (!hook || !hook.secrets.some((secret) => bearerMatches(request.headers.authorization, secret))) {
          return fail(reply, { status: 401, code: 'UNAUTHORIZED', message: 'Invalid bearer secret' });
        }
        const { to, payload } = request.body;
        const refused = await relaySend(deps.verifications, { clientId: hook.client.id, scopes: hook.client.scopes, phone: to, code: payload.code, locale: payload.locale ?? null });
        if (refused) return fail(reply, { ...refused, code: codeOf(refused.status) });
        return reply.code(204).send();
      },
    );

    logto.post<{ Params: HookParams; Body: KratosCodes & { recipient: string; template_type?: string; template_data?: KratosCodes | null } }>(
      '/hooks/kratos/sms/:hookId',
      {
        schema: {
          operationId: 'relayKratosSms',
          summary: "Ory Kratos' HTTP courier (SMS)",
          description:
            "Set as the `sms` courier channel's `request_config.url` in Kratos, with `auth` `api_key` (`in: header`, `name: Authorization`, `value: Bearer <hook secret>`): " +
            'delivers the flow\'s code (`login_code`, `registration_code`, `verification_code` or `recovery_code`, in `template_data` or beside `recipient`) to `recipient`.',
          tags,
          security: [],
          params: hookParams,
          body: kratosBody,
          response: { 204: { type: 'null', description: 'Sent.' }, 400: logtoError, 401: logtoError, 403: logtoError, 429: logtoError, 500: logtoError, 503: logtoError },
        },
      },
      async (request, reply) => {
        const hook = await hookClient(request.params.hookId);
        if (!hook || !hook.secrets.some((secret) => bearerMatches(request.headers.authorization, secret))) {
          return fail(reply, { status: 401, code: 'UNAUTHORIZED', message: 'Invalid bearer secret' });
        }
        const code = kratosCode(request.body);
        if (!code) return fail(reply, { status: 400, code: 'BAD_REQUEST', message: 'No code in the body (login_code, registration_code, verification_code or recovery_code)' });
        const refused = await relaySend(deps.verifications, { clientId: hook.client.id, scopes: hook.client.scopes, phone: request.body.recipient, code });
        if (refused) return fail(reply, { ...refused, code: codeOf(refused.status) });
        return reply.code(204).send();
      },
    );
  });
}

function kratosCode(body: KratosCodes & { template_data?: KratosCodes | null }): string | null {
  for (const source of [body.template_data ?? {}, body]) {
    for (const key of kratosCodeKeys) {
      const code = source[key];
      if (typeof code === 'string' && code !== '') return code;
    }
  }
  return null;
}

/** Standard Webhooks, as Supabase Auth signs its hooks: keyed with the base64 part of `v1,whsec_...`. */
function signedBySupabase(secret: string, request: FastifyRequest): boolean {
  const headers = {
    'webhook-id': String(request.headers['webhook-id'] ?? ''),
    'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
    'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
  };
  try {
    new Webhook(secret.replace(/^v1,whsec_/, '')).verify(request.rawBody ?? '', headers);
    return true;
  } catch {
    return false;
  }
}

/** Logto's Bearer is the whole secret as printed; compared in constant time. */
function bearerMatches(header: string | undefined, secret: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '');
  const expected = Buffer.from(secret);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
