import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { Clock } from '../../domain/ports.js';
import type { UnavailableError } from '../../domain/unavailable.js';
import type { VerificationService } from '../../domain/verification-service.js';
import type { Client } from '../../oauth/client.js';
import { codeOf, relayError, relayErrorBody } from './relay-errors.js';
import { relayOnce, relaySend, type RelayRefusal } from './relay-send.js';
import type { RelayRequests } from '../../domain/relay-requests.js';
import { checkZitadelSignature } from './zitadel-signature.js';

export interface ZitadelRelayDeps {
  readonly verifications: VerificationService;
  readonly clock: Clock;
  /** The hook's client when it exists and is not disabled. */
  readonly clientOf: (hookId: string) => Promise<Client | null>;
  /** Signed requests seen, so that a replayed copy sends nothing. */
  readonly requests: RelayRequests;
}

/**
 * What ZITADEL's HTTP SMS provider posts, read from zitadel/zitadel:
 * - `internal/notification/types/user_phone.go` (generateSms): for an HTTP provider, the JSON of
 *   `serializableData { contextInfo, templateData, args }`, where contextInfo is `{ recipientPhoneNumber, eventType,
 *   provider }` and args are the message's arguments with their first letter lowered (`Code` becomes `code`, `OTP`
 *   becomes `oTP`);
 * - `internal/notification/channels/sms/config.go`: provider is `{ id, description }`;
 * - `internal/notification/templates/templateData.go`: templateData's keys (the message ZITADEL rendered, in `text`);
 * - `internal/notification/types/phone_verification_code.go`, `password_code.go` (`Code`) and `otp.go` (`OTP`): the
 *   code's argument for each message;
 * - `internal/notification/channels/webhook/channel.go`: a POST with `Content-Type: application/json` and, when the
 *   provider has a signing key, `ZITADEL-Signature` (pkg/actions/signing.go; checked in zitadel-signature.ts).
 */
const zitadelBody = {
  type: 'object',
  required: ['contextInfo', 'args'],
  properties: {
    contextInfo: {
      type: 'object',
      required: ['recipientPhoneNumber'],
      properties: {
        recipientPhoneNumber: { type: 'string' },
        eventType: { type: 'string' },
        provider: {
          type: ['object', 'null'],
          properties: { id: { type: 'string' }, description: { type: 'string' } },
          additionalProperties: true,
        },
      },
      additionalProperties: true,
    },
    templateData: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        preHeader: { type: 'string' },
        subject: { type: 'string' },
        greeting: { type: 'string' },
        text: { type: 'string' },
        url: { type: 'string' },
        buttonText: { type: 'string' },
        primaryColor: { type: 'string' },
        backgroundColor: { type: 'string' },
        fontColor: { type: 'string' },
        logoUrl: { type: 'string' },
        fontUrl: { type: 'string' },
        fontFaceFamily: { type: 'string' },
        fontFamily: { type: 'string' },
        includeFooter: { type: 'boolean' },
        footerText: { type: 'string' },
      },
      additionalProperties: true,
    },
    args: { type: 'object', additionalProperties: true },
  },
  additionalProperties: true,
} as const;

interface ZitadelBody {
  contextInfo: { recipientPhoneNumber: string; eventType?: string; provider?: { id?: string; description?: string } | null };
  templateData?: Record<string, unknown>;
  args: Record<string, unknown>;
}

/** The code's argument in each of ZITADEL's SMS messages, as generateSms lowers it: `Code`, `OTP`. */
const codeArgs = ['code', 'oTP'] as const;

/**
 * The relay for ZITADEL's HTTP SMS provider (contract 15): authenticated by ZITADEL-Signature, keyed with the signing
 * key ZITADEL made for the provider (given with `clients hooks ID --zitadel-signing-key`); a bad or stale signature
 * is 401 and nothing is sent. ZITADEL reads only the status (any 2xx is delivered), so errors are `{ code, message }`.
 */
export async function zitadelRelay(app: FastifyInstance, deps: ZitadelRelayDeps): Promise<void> {
  const fail = (reply: FastifyReply, refusal: RelayRefusal) => {
    if (refusal.retryAfterSeconds !== undefined) reply.header('retry-after', String(refusal.retryAfterSeconds));
    return reply.code(refusal.status).send({ code: codeOf(refusal.status), message: refusal.message });
  };
  app.setErrorHandler((error: FastifyError | UnavailableError, request, reply) =>
    relayError(error, request, reply, (status, message, retryAfterSeconds) => fail(reply, { status, message, ...(retryAfterSeconds !== undefined && { retryAfterSeconds }) })),
  );
  app.post<{ Params: { hookId: string }; Body: ZitadelBody }>(
    '/hooks/zitadel/sms/:hookId',
    {
      schema: {
        operationId: 'relayZitadelSms',
        summary: "ZITADEL's HTTP SMS provider",
        description:
          "Set as the HTTP SMS provider's `endpoint` in ZITADEL, with the signing key ZITADEL shows given to `otp-service clients hooks ID --zitadel-signing-key KEY`: " +
          'delivers `args.code` (or `args.oTP`) to `contextInfo.recipientPhoneNumber`. ZITADEL-Signature checked; 204 when sent.',
        tags: ['Relays for auth servers (drop-in)'],
        security: [],
        params: { type: 'object', required: ['hookId'], properties: { hookId: { type: 'string' } } },
        body: zitadelBody,
        response: {
          204: { type: 'null', description: 'Sent.' },
          400: relayErrorBody,
          401: relayErrorBody,
          403: relayErrorBody,
          429: relayErrorBody,
          500: relayErrorBody,
          503: relayErrorBody,
        },
      },
    },
    async (request, reply) => {
      const client = await deps.clientOf(request.params.hookId);
      const key = client?.zitadelSigningKey ?? null;
      const header = request.headers['zitadel-signature'];
      const check = key === null ? 'mismatch' : checkZitadelSignature(Array.isArray(header) ? header[0] : header, request.rawBody ?? '', key, deps.clock.now());
      if (!client || check !== 'valid') {
        return fail(reply, { status: 401, message: check === 'stale' ? 'The signature is too old' : 'Invalid ZITADEL-Signature' });
      }
      const code = codeArgs.map((k) => request.body.args[k]).find((v): v is string => typeof v === 'string' && v !== '');
      if (!code) return fail(reply, { status: 400, message: 'No code in args (code or oTP): ZITADEL sent a message without one' });
      // The signature (its timestamp and HMAC) names the request: a copy within its window sends nothing.
      const signature = String(Array.isArray(header) ? header[0] : header);
      const answer = await relayOnce(deps.requests, { clientId: client.id, key: `zitadel:${signature}`, now: deps.clock.now(), sent: { status: 204 } }, () =>
        relaySend(deps.verifications, { clientId: client.id, scopes: client.scopes, phone: request.body.contextInfo.recipientPhoneNumber, code }),
      );
      if (answer.status !== 204) return fail(reply, { status: answer.status, message: answer.message ?? '', ...(answer.retryAfterSeconds !== undefined && { retryAfterSeconds: answer.retryAfterSeconds }) });
      return reply.code(204).send();
    },
  );
}
