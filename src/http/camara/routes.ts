import { routeNotServed } from '../routes/otp.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { messageTextProblem } from '../../domain/client-settings.js';
import { splitNumberInput } from '../../domain/phone.js';
import type { QuotaLimiter } from '../../domain/quota-limiter.js';
import { allows } from '../../domain/scopes.js';
import { UnavailableError } from '../../domain/unavailable.js';
import type { VerificationService } from '../../domain/verification-service.js';
import type { AccessGrant, TokenService } from '../../oauth/token-service.js';
import { camaraErrors, sendCamaraError, type CamaraErrorCode } from './errors.js';

export interface CamaraRouteDeps {
  readonly verifications: VerificationService;
  readonly codeLength: number;
  readonly tokens: TokenService;
  readonly clientRate: QuotaLimiter | null;
}

/** The description's XCorrelator pattern. */
const correlatorPattern = /^[a-zA-Z0-9-_:;./<>{}]{0,256}$/;
const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const tags = ['CAMARA one-time-password-sms (drop-in)'];
const security = [{ oauth2: ['one-time-password-sms:send-validate'] }];

const errorInfo = (codes: readonly CamaraErrorCode[]) => ({
  type: 'object',
  description: `CAMARA ErrorInfo: ${codes.join(', ')}.`,
  required: ['status', 'code', 'message'],
  properties: { status: { type: 'integer' }, code: { type: 'string', enum: codes }, message: { type: 'string' } },
});

function errorResponses(byCode: readonly CamaraErrorCode[]) {
  const byStatus = new Map<number, CamaraErrorCode[]>();
  for (const code of byCode) byStatus.set(camaraErrors[code].status, [...(byStatus.get(camaraErrors[code].status) ?? []), code]);
  return Object.fromEntries([...byStatus].map(([status, codes]) => [status, errorInfo(codes)]));
}

const correlatorHeader = {
  type: 'object',
  properties: { 'x-correlator': { type: 'string', description: 'Correlation id, echoed on the answer.' } },
} as const;

const sendCodeSchema = {
  operationId: 'camaraSendCode',
  summary: 'Send a code in your own text (CAMARA)',
  description:
    "CAMARA one-time-password-sms v1 `send-code`: sends an SMS of `message` (at most 160 characters and, with the code in it, 3 SMS parts; `{{code}}` where the code goes) to `phoneNumber` (E.164), " +
    'as a new verification under the same limits as `POST /v1/otp/request`; `authenticationId` is its id (readable through /v1).',
  tags,
  security,
  headers: correlatorHeader,
  body: {
    type: 'object',
    required: ['phoneNumber', 'message'],
    properties: {
      phoneNumber: { type: 'string', pattern: '^\\+[1-9][0-9]{4,14}$' },
      message: { type: 'string', pattern: '\\{\\{code\\}\\}', maxLength: 160 },
    },
  },
  response: {
    200: { type: 'object', required: ['authenticationId'], properties: { authenticationId: { type: 'string', maxLength: 36 } } },
    ...errorResponses([
      'INVALID_ARGUMENT',
      'UNAUTHENTICATED',
      'PERMISSION_DENIED',
      'ONE_TIME_PASSWORD_SMS.MAX_OTP_CODES_EXCEEDED',
      'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_NOT_ALLOWED',
      'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_BLOCKED',
      'NOT_FOUND',
      'QUOTA_EXCEEDED',
      'TOO_MANY_REQUESTS',
    ]),
  },
} as const;

const validateCodeSchema = {
  operationId: 'camaraValidateCode',
  summary: 'Validate a code (CAMARA)',
  description:
    'CAMARA one-time-password-sms v1 `validate-code`: checks `code` for `authenticationId`, as `POST /v1/otp/verify` does; 204 when it matches.',
  tags,
  security,
  headers: correlatorHeader,
  body: {
    type: 'object',
    required: ['authenticationId', 'code'],
    properties: { authenticationId: { type: 'string', maxLength: 36 }, code: { type: 'string', maxLength: 10 } },
  },
  response: {
    204: { type: 'null', description: 'The code matched.' },
    ...errorResponses([
      'INVALID_ARGUMENT',
      'ONE_TIME_PASSWORD_SMS.VERIFICATION_FAILED',
      'ONE_TIME_PASSWORD_SMS.VERIFICATION_EXPIRED',
      'ONE_TIME_PASSWORD_SMS.INVALID_OTP',
      'UNAUTHENTICATED',
      'PERMISSION_DENIED',
      'NOT_FOUND',
      'TOO_MANY_REQUESTS',
    ]),
  },
} as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the CAMARA auth hook on every route that reaches its handler. */
    camaraGrant: AccessGrant | null;
  }
}

/**
 * CAMARA's one-time-password-sms v1 (description 1.1.1, release r3.2; contract 15), at
 * /one-time-password-sms/v1: an adapter at the edge over the same VerificationService calls as /v1, with the
 * description's error shape and codes, its `x-correlator` echoed, and bearer tokens from /oauth/token with scope
 * `one-time-password-sms:send-validate`. Register with that prefix.
 */
export async function camaraRoutes(app: FastifyInstance, deps: CamaraRouteDeps): Promise<void> {
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('camaraGrant', null);
  app.setErrorHandler(camaraErrorHandler);
  app.setNotFoundHandler((_request, reply) => sendCamaraError(reply, 'NOT_FOUND'));
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const correlator = request.headers['x-correlator'];
    if (correlator !== undefined) {
      if (typeof correlator !== 'string' || !correlatorPattern.test(correlator)) {
        return sendCamaraError(reply, 'INVALID_ARGUMENT', { message: 'x-correlator does not match the XCorrelator pattern' });
      }
      reply.header('x-correlator', correlator);
    }
    const token = bearerPattern.exec(request.headers.authorization ?? '')?.[1];
    const grant = token ? await deps.tokens.authenticate(token) : null;
    if (!grant) return sendCamaraError(reply, 'UNAUTHENTICATED');
    if (!allows(grant.scopes, 'camaraSendValidate')) return sendCamaraError(reply, 'PERMISSION_DENIED');
    const limiter = deps.clientRate;
    if (limiter && !(await limiter.tryAcquire(`client:${grant.clientId}`))) {
      return sendCamaraError(reply, 'TOO_MANY_REQUESTS', { retryAfterSeconds: Math.max(1, Math.ceil(limiter.msToNextWindow() / 1000)) });
    }
    request.camaraGrant = grant;
    return undefined;
  });

  app.post<{ Body: { phoneNumber: string; message: string } }>('/send-code', { schema: sendCodeSchema }, async (request, reply) => {
    const clientId = grantOf(request).clientId;
    const number = splitNumberInput(undefined, request.body.phoneNumber);
    if (number.kind !== 'split') return sendCamaraError(reply, 'INVALID_ARGUMENT', { message: 'phoneNumber is not a valid E.164 number' });
    const problem = messageTextProblem(request.body.message, deps.codeLength);
    if (problem) return sendCamaraError(reply, 'INVALID_ARGUMENT', { message: `message ${problem}` });
    const outcome = await deps.verifications.create({
      clientId,
      countryCode: number.countryCode,
      phoneNumber: number.phoneNumber,
      type: 'SEND_SMS',
      webhookUrl: null,
      reference: null,
      locale: null,
      idempotency: null,
      // send-code is an SMS: no workflow of later steps (a client's default one included).
      fallback: [],
      messageText: request.body.message,
    });
    switch (outcome.kind) {
      case 'created':
      case 'replayed':
        return { authenticationId: outcome.verification.id };
      case 'invalid-phone':
        return sendCamaraError(reply, 'INVALID_ARGUMENT', { message: 'phoneNumber is not a valid phone number' });
      case 'channel-not-offered':
        return sendCamaraError(reply, 'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_NOT_ALLOWED', { message: 'This service sends no SMS (SMS_PROVIDER is unset).' });
      case 'route-not-served':
        return sendCamaraError(reply, 'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_NOT_ALLOWED', { message: `${routeNotServed(outcome)}.` });
      case 'not-allowed':
        return sendCamaraError(reply, outcome.rule === 'prefix' ? 'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_BLOCKED' : 'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_NOT_ALLOWED');
      case 'rate-limited':
        return outcome.reason === 'phone'
          ? sendCamaraError(reply, 'ONE_TIME_PASSWORD_SMS.MAX_OTP_CODES_EXCEEDED', { retryAfterSeconds: outcome.retryAfterSeconds })
          : sendCamaraError(reply, 'QUOTA_EXCEEDED', { retryAfterSeconds: outcome.retryAfterSeconds });
      case 'blocked':
        return sendCamaraError(reply, 'ONE_TIME_PASSWORD_SMS.PHONE_NUMBER_BLOCKED');
      case 'captcha':
        // CAMARA's body has no CAPTCHA token: a client that requires one creates through /v1.
        return outcome.outcome === 'unavailable'
          ? sendCamaraError(reply, 'UNAVAILABLE')
          : sendCamaraError(reply, 'PERMISSION_DENIED', { message: 'This client requires a CAPTCHA token, which send-code cannot carry: create through /v1.' });
      case 'idempotency-key-reused':
      case 'invalid-fallback':
        return sendCamaraError(reply, 'INTERNAL');
    }
  });

  app.post<{ Body: { authenticationId: string; code: string } }>('/validate-code', { schema: validateCodeSchema }, async (request, reply) => {
    const outcome = await deps.verifications.verify(grantOf(request).clientId, request.body.authenticationId, request.body.code);
    switch (outcome.kind) {
      case 'success':
        return reply.code(204).send();
      case 'mismatch':
        return sendCamaraError(
          reply,
          outcome.verification.status === 'FAILED' ? 'ONE_TIME_PASSWORD_SMS.VERIFICATION_FAILED' : 'ONE_TIME_PASSWORD_SMS.INVALID_OTP',
        );
      case 'not-pending':
        return sendCamaraError(
          reply,
          outcome.verification.failureReason === 'MAX_ATTEMPTS' ? 'ONE_TIME_PASSWORD_SMS.VERIFICATION_FAILED' : 'ONE_TIME_PASSWORD_SMS.VERIFICATION_EXPIRED',
        );
      case 'not-found':
        return sendCamaraError(reply, 'NOT_FOUND');
      case 'unavailable':
        // The verify service holding the code did not answer: no attempt was counted.
        return sendCamaraError(reply, 'UNAVAILABLE', { retryAfterSeconds: outcome.retryAfterSeconds });
    }
  });
}

function grantOf(request: FastifyRequest): AccessGrant {
  if (!request.camaraGrant) throw new Error('route reached without the CAMARA auth hook');
  return request.camaraGrant;
}

/** Whatever a CAMARA route threw, in the description's ErrorInfo shape. */
function camaraErrorHandler(error: FastifyError | UnavailableError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof UnavailableError) {
    request.log.warn({ reason: error.message }, 'database unavailable');
    return sendCamaraError(reply, 'UNAVAILABLE', { retryAfterSeconds: error.retryAfterSeconds });
  }
  if (error.validation) {
    const first = error.validation[0];
    const field = (first?.instancePath ?? '').replace(/^\//, '') || String(first?.params?.missingProperty ?? 'body');
    return sendCamaraError(reply, 'INVALID_ARGUMENT', { message: `Client specified an invalid argument: ${field} ${first?.message ?? 'is invalid'}` });
  }
  if (error.statusCode === 413) return sendCamaraError(reply, 'PAYLOAD_TOO_LARGE');
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return sendCamaraError(reply, 'INVALID_ARGUMENT');
  request.log.error({ err: error }, 'unexpected error');
  return sendCamaraError(reply, 'INTERNAL');
}
