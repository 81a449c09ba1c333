import { routeNotServed } from '../routes/otp.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalLocale } from '../../domain/client-settings.js';
import { allows } from '../../domain/scopes.js';
import { isE164Form, splitNumberInput } from '../../domain/phone.js';
import { UnavailableError } from '../../domain/unavailable.js';
import type { RequestType, Verification } from '../../domain/verification.js';
import type { CreateOutcome, VerificationService } from '../../domain/verification-service.js';
import type { Client } from '../../oauth/client.js';
import { fieldProblems } from '../error-handler.js';
import { registerTwilioAuth, twilioClientOf, type TwilioAuthDeps } from './auth.js';
import { sendTwilioError } from './errors.js';
import { checkResource, isTwilioChannel, requestTypeOfChannel, serviceUrl, verificationResource } from './resources.js';
import {
  checkSchema,
  createVerificationSchema,
  fetchServiceSchema,
  fetchVerificationSchema,
  listServicesSchema,
  updateVerificationSchema,
} from './schemas.js';
import { sidOf, uuidOfSid } from './sids.js';

export interface TwilioRouteDeps extends TwilioAuthDeps {
  readonly verifications: VerificationService;
  /** Links name it (contract 15); when null, the origin the request names. */
  readonly publicBaseUrl: string | null;
  /** The request type a name stands for when a channel driver takes it (the channel registry). */
  readonly requestTypeNamed: (name: string) => RequestType | null;
  /** OTP_LENGTH, shown as the service's `code_length`. */
  readonly codeLength: number;
}

type Form = Record<string, string>;

/**
 * `To` as Twilio takes it: exactly an E.164 number. The number parser alone is lenient (it reads past spaces,
 * dashes and control characters, and a `%00` reached it), so the form is checked first.
 */
function twilioTo(to: string): ReturnType<typeof splitNumberInput> | null {
  return isE164Form(to) ? splitNumberInput(undefined, to) : null;
}

interface ServiceParams {
  ServiceSid: string;
}
interface VerificationParams extends ServiceParams {
  Sid: string;
}

/**
 * Twilio Verify v2, the subset contract 15 names, at /v2: an adapter at the edge that translates Twilio's forms,
 * sids, statuses and errors to the same VerificationService calls as /v1 (create, fetch, verify, cancel), so
 * every limit, provider, stat and webhook applies as there. Register with the prefix /v2.
 */
export async function twilioRoutes(app: FastifyInstance, deps: TwilioRouteDeps): Promise<void> {
  // Twilio's API takes forms only. A repeated parameter keeps its first value, as Twilio reads it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const form: Form = Object.create(null) as Form;
    for (const [name, value] of new URLSearchParams(String(body))) form[name] ??= value;
    done(null, form);
  });
  app.setErrorHandler(twilioErrorHandler);
  app.setNotFoundHandler((_request, reply) => sendTwilioError(reply, 20404));
  registerTwilioAuth(app, deps);

  const base = (request: FastifyRequest): string => deps.publicBaseUrl ?? `${request.protocol}://${request.host}`;
  /** The client whose service the path names; null (and a 20404 sent) for any other service sid. */
  const serviceClient = (request: FastifyRequest<{ Params: ServiceParams }>, reply: FastifyReply): Client | null => {
    const client = twilioClientOf(request);
    if (uuidOfSid('VA', request.params.ServiceSid) === client.id) return client;
    sendTwilioError(reply, 20404, { message: `The requested resource /Services/${request.params.ServiceSid} was not found` });
    return null;
  };
  const serviceOf = (client: Client, url: string) => ({
    sid: sidOf('VA', client.id),
    account_sid: sidOf('AC', client.id),
    friendly_name: client.name.slice(0, 30),
    code_length: deps.codeLength,
    lookup_enabled: false,
    psd2_enabled: false,
    skip_sms_to_landlines: false,
    dtmf_input_required: false,
    tts_name: null,
    do_not_share_warning_enabled: false,
    custom_code_enabled: false,
    push: null,
    totp: null,
    default_template_sid: null,
    whatsapp: null,
    verify_event_subscription_enabled: false,
    date_created: client.createdAt.toISOString(),
    date_updated: client.createdAt.toISOString(),
    url,
    links: { verifications: `${url}/Verifications`, verification_checks: `${url}/VerificationCheck` },
  });

  app.get('/Services', { schema: listServicesSchema, config: { twilioOperation: 'fetchStats' } }, async (request) => {
    const client = twilioClientOf(request);
    const listUrl = `${base(request)}/v2/Services?PageSize=50&Page=0`;
    return {
      services: [serviceOf(client, serviceUrl(base(request), client.id))],
      meta: { page: 0, page_size: 50, first_page_url: listUrl, previous_page_url: null, url: listUrl, next_page_url: null, key: 'services' },
    };
  });

  app.get<{ Params: ServiceParams }>(
    '/Services/:ServiceSid',
    { schema: fetchServiceSchema, config: { twilioOperation: 'fetchStats' } },
    async (request, reply) => {
      const client = serviceClient(request, reply);
      if (!client) return reply;
      return serviceOf(client, serviceUrl(base(request), client.id));
    },
  );

  app.post<{ Params: ServiceParams; Body: Form }>(
    '/Services/:ServiceSid/Verifications',
    { schema: createVerificationSchema, config: { twilioOperation: 'createVerification' } },
    async (request, reply) => {
      const client = serviceClient(request, reply);
      if (!client) return reply;
      const { To: to = '', Channel: channel = '', Locale: localeWord } = request.body;
      const number = twilioTo(to);
      if (number?.kind !== 'split') return invalid(reply, 'To', 'must be a phone number in E.164 format');
      if (!isTwilioChannel(channel)) return invalid(reply, 'Channel', 'must be sms, call or whatsapp');
      const type = deps.requestTypeNamed(requestTypeOfChannel[channel]);
      if (!type) return sendTwilioError(reply, 60223, { message: `Delivery channel disabled: ${channel.toUpperCase()}` });
      const locale = localeWord ? canonicalLocale(localeWord) : null;
      if (localeWord && !locale) return invalid(reply, 'Locale', 'must be a BCP 47 language tag such as fr or pt-BR');
      const outcome = await deps.verifications.create({
        clientId: client.id,
        countryCode: number.countryCode,
        phoneNumber: number.phoneNumber,
        type,
        webhookUrl: null,
        reference: null,
        locale,
        idempotency: null,
        // Twilio's create names one channel: no workflow of later steps (a client's default one included).
        fallback: [],
      });
      return createAnswer(reply, outcome, channel, base(request));
    },
  );

  app.get<{ Params: VerificationParams }>(
    '/Services/:ServiceSid/Verifications/:Sid',
    { schema: fetchVerificationSchema, config: { twilioOperation: 'fetchVerification' } },
    async (request, reply) => {
      const client = serviceClient(request, reply);
      if (!client) return reply;
      const v = await deps.verifications.fetch(client.id, uuidOfSid('VE', request.params.Sid) ?? '');
      if (!v) return verificationNotFound(reply, request.params.Sid);
      return verificationResource(v, base(request));
    },
  );

  app.post<{ Params: VerificationParams; Body: Form }>(
    '/Services/:ServiceSid/Verifications/:Sid',
    { schema: updateVerificationSchema, config: { twilioOperation: 'cancelVerification' } },
    async (request, reply) => {
      const client = serviceClient(request, reply);
      if (!client) return reply;
      const id = uuidOfSid('VE', request.params.Sid) ?? '';
      // Approving is a verify without a code: it takes what a check takes (otp:verify), not what a cancel does.
      const approving = request.body.Status === 'approved';
      if (approving && !allows(client.scopes, 'verifyCode')) return sendTwilioError(reply, 20403);
      const outcome = approving ? await deps.verifications.approve(client.id, id) : await deps.verifications.cancel(client.id, id);
      if (outcome.kind === 'not-found' || outcome.kind === 'not-pending') return verificationNotFound(reply, request.params.Sid);
      return verificationResource(outcome.verification, base(request));
    },
  );

  app.post<{ Params: ServiceParams; Body: Form }>(
    '/Services/:ServiceSid/VerificationCheck',
    { schema: checkSchema, config: { twilioOperation: 'verifyCode' } },
    async (request, reply) => {
      const client = serviceClient(request, reply);
      if (!client) return reply;
      const { Code: code = '', To: to, VerificationSid: sid } = request.body;
      if (code === '') return invalid(reply, 'Code', 'is required');
      // By sid, the verify itself reads the verification (one read, as /v1's verify); by number, it is looked up first.
      let targetId: string | null;
      if (sid !== undefined) {
        targetId = uuidOfSid('VE', sid);
      } else if (to !== undefined) {
        const number = twilioTo(to);
        if (number?.kind !== 'split') return invalid(reply, 'To', 'must be a phone number in E.164 format');
        const latest: Verification | null = await deps.verifications.latestOfNumber(client.id, number.countryCode, number.phoneNumber);
        targetId = latest?.id ?? null;
      } else {
        return invalid(reply, 'To', 'or VerificationSid is required');
      }
      if (!targetId) return verificationNotFound(reply, sid ?? to ?? '');
      const outcome = await deps.verifications.verify(client.id, targetId, code);
      switch (outcome.kind) {
        case 'success':
        case 'mismatch':
          return checkResource(outcome.verification);
        case 'not-pending':
          // Twilio answers 60202 to every check after the one that used the last attempt.
          if (outcome.verification.failureReason === 'MAX_ATTEMPTS') return sendTwilioError(reply, 60202);
          return verificationNotFound(reply, sid ?? to ?? '');
        case 'not-found':
          return verificationNotFound(reply, sid ?? to ?? '');
        case 'unavailable':
          // The verify service holding the code did not answer: no attempt was counted.
          return sendTwilioError(reply, 20503, { message: 'The verify service that sent the code did not answer; retry later', retryAfterSeconds: outcome.retryAfterSeconds });
      }
    },
  );
}

function createAnswer(reply: FastifyReply, outcome: CreateOutcome, channel: string, base: string): FastifyReply | ReturnType<typeof verificationResource> {
  switch (outcome.kind) {
    case 'created':
    case 'replayed':
      reply.code(201);
      return verificationResource(outcome.verification, base);
    case 'invalid-phone':
      return invalid(reply, 'To', 'is not a valid phone number');
    case 'channel-not-offered':
      return sendTwilioError(reply, 60223, { message: `Delivery channel disabled: ${channel.toUpperCase()}` });
    case 'route-not-served':
      return sendTwilioError(reply, 60223, { message: `Delivery channel disabled: ${channel.toUpperCase()} (${routeNotServed(outcome)})` });
    case 'not-allowed':
      return sendTwilioError(reply, 60410, { message: `Verification delivery attempt blocked: ${outcome.detail}` });
    case 'blocked':
      return sendTwilioError(reply, 60410, { message: `Verification delivery attempt blocked: ${outcome.value} is on a block list` });
    case 'captcha':
      // Twilio's form has no CAPTCHA token: a client that requires one creates through /v1.
      return outcome.outcome === 'unavailable'
        ? sendTwilioError(reply, 20503)
        : sendTwilioError(reply, 20403, { message: 'This client requires a CAPTCHA token, which /v2 cannot carry: create through /v1 with captchaToken' });
    case 'rate-limited':
      return outcome.reason === 'phone'
        ? sendTwilioError(reply, 60203, { retryAfterSeconds: outcome.retryAfterSeconds })
        : sendTwilioError(reply, 20429, { retryAfterSeconds: outcome.retryAfterSeconds });
    case 'idempotency-key-reused':
    case 'invalid-fallback':
      // /v2 sends no Idempotency-Key and no later steps; nothing reaches here.
      return sendTwilioError(reply, 20500);
  }
}

function invalid(reply: FastifyReply, parameter: string, why: string): FastifyReply {
  return sendTwilioError(reply, 60200, { message: `Invalid parameter \`${parameter}\`: ${why}` });
}

function verificationNotFound(reply: FastifyReply, sid: string): FastifyReply {
  return sendTwilioError(reply, 20404, { message: `The requested resource /Verifications/${sid} was not found` });
}

/** Whatever a /v2 route threw, in Twilio's error shape: never a stack trace, never the /v1 shape. */
function twilioErrorHandler(error: FastifyError | UnavailableError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof UnavailableError) {
    request.log.warn({ reason: error.message }, 'database unavailable');
    return sendTwilioError(reply, 20503, { retryAfterSeconds: error.retryAfterSeconds });
  }
  if (error.validation) {
    const [first] = fieldProblems(error.validation, error.validationContext);
    return sendTwilioError(reply, 60200, { message: first ? `Invalid parameter \`${first.field}\`: ${first.issue}` : undefined });
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.statusCode === 415) return sendTwilioError(reply, 20415);
  if (error.statusCode === 413) return sendTwilioError(reply, 20413);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return sendTwilioError(reply, 60200, { message: 'Invalid request body' });
  }
  request.log.error({ err: error }, 'unexpected error');
  return sendTwilioError(reply, 20500);
}
