import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Channel } from '../../domain/channel-driver.js';
import { canonicalLocale } from '../../domain/client-settings.js';
import { webhookDestinationProblem, type WebhookDestinations } from '../../webhooks/destination-policy.js';
import type { FieldProblem } from '../../domain/error-catalogue.js';
import type { RequestType, Verification } from '../../domain/verification.js';
import { canonicalAddress } from '../../domain/ip-address.js';
import type { Signals } from '../../domain/signals.js';
import type { CreateOutcome, VerificationService } from '../../domain/verification-service.js';
import { grantOf } from '../auth-hook.js';
import { publicRecord, sendError, sendNotPending, sendVerificationNotFound } from '../envelope.js';
import { examples } from '../api-examples.js';
import { envelopeOf } from '../record-schema.js';
import { numberOf } from '../number-input.js';
import { createBodySchema, idempotencyHeaderSchema, idParamsSchema, v1Answers, verifyBodySchema } from '../schemas.js';
import { sendCaptchaRefusal, sendLimited, sendNotAllowed } from '../refusals.js';

const tags = ['Verifications'];

const createSchema = {
  operationId: 'createVerification',
  summary: 'Create a verification and send its code',
  description:
    'Creates a verification for a phone number and sends its code through the channel of `type`: an SMS, a dropped call whose caller id ends with the code, or a call that reads the code aloud. ' +
    'The message is sent after the record is committed; a provider outage never loses the request (it is retried; a permanent failure turns it `FAILED`). ' +
    'An `Idempotency-Key` repeated by the same client within 24 h returns the first response and sends nothing new.',
  tags,
  headers: idempotencyHeaderSchema,
  body: createBodySchema,
  response: v1Answers(envelopeOf('OTP sent', examples.pending), ['INVALID_PHONE_NUMBER', 'CAPTCHA_REQUIRED', 'CAPTCHA_FAILED', 'NUMBER_NOT_ALLOWED', 'RATE_LIMITED', 'IDEMPOTENCY_KEY_REUSED', 'UNAVAILABLE'], {
    jsonBody: true,
  }),
} as const;

const fetchSchema = {
  operationId: 'getVerification',
  summary: 'Get a verification',
  description:
    'The verification as it stands. One whose time is up reads `EXPIRED` at once. Another client\'s verification is a 404.',
  tags,
  params: idParamsSchema,
  response: v1Answers(envelopeOf('Verification fetched', examples.pending), ['NOT_FOUND'], { jsonBody: false }),
} as const;

const verifySchema = {
  operationId: 'verifyCode',
  summary: 'Check a code',
  description:
    'Compares the code in constant time; each call on a `PENDING` verification adds 1 to `counter`. ' +
    'A wrong code is a 422 with the record; the last allowed attempt (`OTP_MAX_ATTEMPTS`, default 5) turns it `FAILED`. ' +
    'A verification no longer `PENDING` is a 409 with the record. ' +
    'When the latest send went through a verify service (`twilio-verify`, `vonage-verify`), that service checks the code and its answer counts as above; ' +
    'if it does not answer in time the answer is 503 `UNAVAILABLE` with `Retry-After`, and no attempt is counted.',
  tags,
  body: verifyBodySchema,
  response: v1Answers(envelopeOf('Verification successful', examples.success), ['NOT_FOUND', 'OTP_MISMATCH', 'VERIFICATION_NOT_PENDING', 'UNAVAILABLE'], {
    jsonBody: true,
  }),
} as const;

interface CreateBody {
  countryCode?: string;
  phoneNumber: string;
  type?: RequestType;
  webhookUrl?: string | null;
  reference?: string | null;
  locale?: string | null;
  fallback?: string[];
  signals?: SignalsBody;
  captchaToken?: string;
}

interface SignalsBody {
  ip?: string;
  deviceId?: string;
  userAgent?: string;
  appVersion?: string;
  platform?: Signals['platform'];
}

/** Why a create's type is refused when its channel has no provider here. */
const channelNotOffered: Readonly<Record<Channel, string>> = {
  sms: 'SEND_SMS is not offered by this service: it has no SMS provider (SMS_PROVIDER)',
  call: 'DROPPED_CALL is not offered by this service: it has no call provider (CALL_PROVIDER)',
  whatsapp: 'WHATSAPP is not offered by this service: it has no WhatsApp provider (WHATSAPP_PROVIDER)',
  voice: 'VOICE_CALL is not offered by this service: it has no voice provider (VOICE_PROVIDER)',
  telegram: 'TELEGRAM is not offered by this service: it has no Telegram provider (TELEGRAM_PROVIDER)',
  silent: 'SILENT is not offered by this service: it has no silent verification provider (SILENT_PROVIDER)',
};

/** A channel by the request type that takes it. */
const typeOfChannel: Readonly<Record<Channel, string>> = { sms: 'SEND_SMS', call: 'DROPPED_CALL', whatsapp: 'WHATSAPP', voice: 'VOICE_CALL', telegram: 'TELEGRAM', silent: 'SILENT' };

/** Why a create is refused when its number's route names no provider configured here (every surface says it so). */
export function routeNotServed({ channel, route }: Extract<CreateOutcome, { kind: 'route-not-served' }>): string {
  return `${typeOfChannel[channel]} to this number goes by the ${channel} route for ${route.destination}, and none of its providers (${route.providers.join(', ')}) is configured here for ${channel}`;
}

/** POST /v1/otp/request, GET /v1/otp/:id, POST /v1/otp/verify. */
export function otpRoutes(
  app: FastifyInstance,
  verifications: VerificationService,
  destinations: WebhookDestinations,
  currency: string,
  /** A SILENT verification's check URL (SILENT_PROVIDER=camara), null for others; absent: none is served. */
  checkUrlOf: (v: Verification) => string | null = () => null,
): void {
  const withCheckUrl = (v: Verification) => {
    const checkUrl = checkUrlOf(v);
    return { ...publicRecord(v, currency), ...(checkUrl !== null && { checkUrl }) };
  };
  app.post<{ Body: CreateBody }>(
    '/v1/otp/request',
    { schema: createSchema, config: { operation: 'createVerification' } },
    async (request, reply) => {
      const body = request.body;
      const webhookUrl = body.webhookUrl ?? null;
      const idempotencyKey = request.headers['idempotency-key'];
      const problems: FieldProblem[] = [];
      if (webhookUrl !== null) {
        const issue = webhookDestinationProblem(webhookUrl, destinations);
        if (issue) problems.push({ field: 'webhookUrl', issue });
      }
      // PostgreSQL text cannot hold U+0000: refuse it here rather than fail the insert.
      const referenceIssue = body.reference ? referenceProblem(body.reference) : null;
      if (referenceIssue) problems.push({ field: 'reference', issue: referenceIssue });
      const locale = body.locale ? canonicalLocale(body.locale) : null;
      if (body.locale && locale === null) problems.push({ field: 'locale', issue: 'must be a BCP 47 language tag such as fr or pt-BR' });
      if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(String(idempotencyKey))) {
        problems.push({ field: 'Idempotency-Key', issue: 'must be 1 to 255 visible ASCII characters' });
      }
      const signals = body.signals ? signalsOf(body.signals, problems) : null;
      if (problems.length > 0) return sendError(reply, 'VALIDATION_ERROR', { details: problems });
      const number = numberOf(body, reply);
      if (!number) return reply;
      const input = {
        countryCode: number.countryCode,
        phoneNumber: number.phoneNumber,
        type: body.type ?? 'SEND_SMS',
        webhookUrl,
        reference: body.reference ?? null,
        locale,
        fallback: body.fallback ?? null,
      } as const;
      const outcome = await verifications.create({
        ...input,
        clientId: grantOf(request).clientId,
        // Not part of the fingerprint: the same request repeated from another address is still the same request.
        signals,
        captchaToken: body.captchaToken ?? null,
        idempotency:
          typeof idempotencyKey === 'string'
            ? { key: idempotencyKey, fingerprint: createHash('sha256').update(JSON.stringify(input)).digest('hex') }
            : null,
      });
      switch (outcome.kind) {
        case 'created':
        case 'replayed':
          return { status: true, message: 'OTP sent', data: withCheckUrl(outcome.verification) };
        case 'invalid-fallback':
          return sendError(reply, 'VALIDATION_ERROR', { details: [{ field: 'fallback', issue: outcome.issue }] });
        case 'invalid-phone':
          return sendError(reply, 'INVALID_PHONE_NUMBER', {
            details: [{ field: 'phoneNumber', issue: `is not a valid number for country code ${number.countryCode}` }],
          });
        case 'rate-limited':
          return sendLimited(reply, outcome);
        case 'idempotency-key-reused':
          return sendError(reply, 'IDEMPOTENCY_KEY_REUSED');
        case 'channel-not-offered':
          return sendError(reply, 'VALIDATION_ERROR', {
            details: [{ field: 'type', issue: channelNotOffered[outcome.channel] }],
          });
        case 'route-not-served':
          return sendError(reply, 'VALIDATION_ERROR', { details: [{ field: 'type', issue: routeNotServed(outcome) }] });
        case 'not-allowed':
          return sendNotAllowed(reply, outcome);
        case 'captcha':
          return sendCaptchaRefusal(reply, outcome);
        case 'blocked':
          return sendError(reply, 'NUMBER_NOT_ALLOWED', {
            message: 'This number is blocked by the operator',
            details: [{ rule: 'blocked', value: outcome.value }, ...outcome.factors],
          });
      }
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/otp/:id',
    { schema: fetchSchema, config: { operation: 'fetchVerification' } },
    async (request, reply) => {
      const v = await verifications.fetch(grantOf(request).clientId, request.params.id);
      if (!v) return sendVerificationNotFound(reply);
      return { status: true, message: 'Verification fetched', data: withCheckUrl(v) };
    },
  );

  app.post<{ Body: { id: string; otp: string } }>(
    '/v1/otp/verify',
    { schema: verifySchema, config: { operation: 'verifyCode' } },
    async (request, reply) => {
      const outcome = await verifications.verify(grantOf(request).clientId, request.body.id, request.body.otp);
      switch (outcome.kind) {
        case 'success':
          return { status: true, message: 'Verification successful', data: publicRecord(outcome.verification, currency) };
        case 'mismatch':
          return sendError(reply, 'OTP_MISMATCH', { data: publicRecord(outcome.verification, currency) });
        case 'not-pending':
          return sendNotPending(reply, outcome.verification, currency);
        case 'not-found':
          return sendVerificationNotFound(reply);
        case 'unavailable':
          return sendError(reply, 'UNAVAILABLE', { message: 'The verify service that sent the code did not answer in time; try again later', retryAfterSeconds: outcome.retryAfterSeconds });
      }
    },
  );
}

/** A create's signals as the service keeps them, its address canonical; each problem is added to `problems`. */
function signalsOf(body: SignalsBody, problems: FieldProblem[]): Signals {
  const ip = body.ip === undefined ? null : canonicalAddress(body.ip);
  if (body.ip !== undefined && ip === null) problems.push({ field: 'signals.ip', issue: 'must be an IPv4 or IPv6 address' });
  const text = (field: 'deviceId' | 'userAgent' | 'appVersion'): string | null => {
    const value = body[field];
    if (value === undefined) return null;
    const issue = referenceProblem(value);
    if (issue) problems.push({ field: `signals.${field}`, issue });
    return value;
  };
  return { ip, deviceId: text('deviceId'), userAgent: text('userAgent'), appVersion: text('appVersion'), platform: body.platform ?? null };
}

/**
 * Why a reference is refused, or null. Both databases must store exactly what was sent, and give it back: text
 * PostgreSQL cannot hold (U+0000), text that is not Unicode (a lone surrogate, which PostgreSQL would store as
 * U+FFFD), and a leading U+FEFF (which the embedded database drops) are refused rather than changed.
 */
export function referenceProblem(reference: string): string | null {
  if (reference.includes('\u0000')) return 'must not contain NUL characters';
  if (/\p{Surrogate}/u.test(reference)) return 'must be valid Unicode text (no lone surrogates)';
  if (reference.startsWith('\uFEFF')) return 'must not start with U+FEFF (a byte order mark)';
  return null;
}

