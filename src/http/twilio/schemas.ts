import { twilioErrors } from './errors.js';

/**
 * The /v2 routes' schemas: they validate the forms, serialize the answers (a field not here never leaks) and
 * document the Twilio-shaped surface in the one /openapi.json, under its own tag. The shapes are those of
 * Twilio's own description (`twilio_verify_v2`, in @twilio-alpha/mcp), which the tests validate every answer with.
 */
export const twilioTags = ['Twilio Verify v2 (drop-in)'];

export const twilioSecurity = [{ twilioBasic: [] }];

const sid = (prefix: string) => ({ type: 'string', pattern: `^${prefix}[0-9a-fA-F]{32}$` }) as const;
const date = { type: 'string', format: 'date-time' } as const;
const status = {
  type: 'string',
  enum: ['pending', 'approved', 'canceled', 'max_attempts_reached', 'expired', 'failed'],
} as const;
const channel = { type: 'string', enum: ['sms', 'call', 'whatsapp'] } as const;

const verificationResource = {
  type: 'object',
  description: "Twilio's Verification resource; its `sid` names the same verification as its `/v1` id (`VE` + the id's hex digits).",
  properties: {
    sid: sid('VE'),
    service_sid: sid('VA'),
    account_sid: sid('AC'),
    to: { type: 'string', description: 'E.164.' },
    channel,
    status,
    valid: { type: 'boolean' },
    lookup: { type: 'object', additionalProperties: true },
    amount: { type: 'null' },
    payee: { type: 'null' },
    send_code_attempts: {
      type: 'array',
      items: { type: 'object', properties: { time: date, channel: { type: 'string' } } },
    },
    date_created: date,
    date_updated: date,
    sna: { type: 'null' },
    url: { type: 'string', format: 'uri' },
  },
} as const;

const checkResource = {
  type: 'object',
  description: "Twilio's VerificationCheck resource.",
  properties: {
    sid: sid('VE'),
    service_sid: sid('VA'),
    account_sid: sid('AC'),
    to: { type: 'string' },
    channel,
    status,
    valid: { type: 'boolean' },
    amount: { type: 'null' },
    payee: { type: 'null' },
    sna_attempts_error_codes: { type: 'array', items: {} },
    date_created: date,
    date_updated: date,
  },
} as const;

const nullable = { type: 'null' } as const;

const serviceResource = {
  type: 'object',
  description: 'The one Verify service of the client (`VA` + its id\'s hex digits).',
  properties: {
    sid: sid('VA'),
    account_sid: sid('AC'),
    friendly_name: { type: 'string' },
    code_length: { type: 'integer' },
    lookup_enabled: { type: 'boolean' },
    psd2_enabled: { type: 'boolean' },
    skip_sms_to_landlines: { type: 'boolean' },
    dtmf_input_required: { type: 'boolean' },
    tts_name: nullable,
    do_not_share_warning_enabled: { type: 'boolean' },
    custom_code_enabled: { type: 'boolean' },
    push: nullable,
    totp: nullable,
    default_template_sid: nullable,
    whatsapp: nullable,
    verify_event_subscription_enabled: { type: 'boolean' },
    date_created: date,
    date_updated: date,
    url: { type: 'string', format: 'uri' },
    links: {
      type: 'object',
      properties: { verifications: { type: 'string', format: 'uri' }, verification_checks: { type: 'string', format: 'uri' } },
    },
  },
} as const;

const errorBody = {
  type: 'object',
  description: "Twilio's error shape.",
  required: ['code', 'message', 'more_info', 'status'],
  properties: {
    code: { type: 'integer' },
    message: { type: 'string' },
    more_info: { type: 'string', format: 'uri' },
    status: { type: 'integer' },
  },
} as const;

/** The error answers of a /v2 route, by HTTP status, naming the Twilio codes each may carry. */
function errors(codes: readonly (keyof typeof twilioErrors)[]) {
  const byStatus = new Map<number, number[]>();
  for (const code of [20003, 20429, 20500, 20503, ...codes] as const) {
    const status = twilioErrors[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [status, { ...errorBody, description: `Twilio error ${list.join(', ')}.` }]),
  );
}

const serviceParams = {
  type: 'object',
  required: ['ServiceSid'],
  properties: { ServiceSid: { type: 'string', description: 'The client\'s service sid, from GET /v2/Services.' } },
} as const;

const form = (properties: Record<string, object>, required: readonly string[]) => ({
  type: 'object',
  required,
  properties,
  additionalProperties: true,
});

export const listServicesSchema = {
  operationId: 'twilioListServices',
  summary: 'List Verify services (Twilio-shaped)',
  description: 'The one Verify service of the authenticated client, in Twilio\'s list shape.',
  tags: twilioTags,
  security: twilioSecurity,
  response: {
    200: {
      type: 'object',
      properties: {
        services: { type: 'array', items: serviceResource },
        meta: {
          type: 'object',
          properties: {
            first_page_url: { type: 'string' },
            key: { type: 'string' },
            next_page_url: nullable,
            page: { type: 'integer' },
            page_size: { type: 'integer' },
            previous_page_url: nullable,
            url: { type: 'string' },
          },
        },
      },
    },
    ...errors([]),
  },
} as const;

export const fetchServiceSchema = {
  operationId: 'twilioFetchService',
  summary: 'Fetch the Verify service (Twilio-shaped)',
  description: 'The client\'s one Verify service; any other service sid is 20404.',
  tags: twilioTags,
  security: twilioSecurity,
  params: serviceParams,
  response: { 200: serviceResource, ...errors([20404]) },
} as const;

export const createVerificationSchema = {
  operationId: 'twilioCreateVerification',
  summary: 'Start a verification (Twilio-shaped)',
  description:
    'Creates a verification, as `POST /v1/otp/request` does, under the same limits: `To` in E.164, `Channel` `sms`, `call` (the code read aloud) or `whatsapp`, ' +
    'each where the service has a provider for it (else 60223), `Locale` optional. 201 with Twilio\'s Verification resource.',
  tags: twilioTags,
  security: twilioSecurity,
  params: serviceParams,
  body: form({ To: { type: 'string' }, Channel: { type: 'string' }, Locale: { type: 'string' } }, ['To', 'Channel']),
  response: { 201: verificationResource, ...errors([20404, 20403, 60200, 60203, 60223, 60410]) },
} as const;

export const fetchVerificationSchema = {
  operationId: 'twilioFetchVerification',
  summary: 'Fetch a verification (Twilio-shaped)',
  description: 'The verification as it stands (one whose time is up reads `expired`); the same one `GET /v1/otp/{id}` reads. Another client\'s sid is 20404.',
  tags: twilioTags,
  security: twilioSecurity,
  params: { ...serviceParams, required: ['ServiceSid', 'Sid'], properties: { ...serviceParams.properties, Sid: { type: 'string' } } },
  response: { 200: verificationResource, ...errors([20404]) },
} as const;

export const updateVerificationSchema = {
  operationId: 'twilioUpdateVerification',
  summary: 'Cancel or approve a verification (Twilio-shaped)',
  description: '`Status=canceled` cancels it (as `POST /v1/otp/{id}/cancel`); `Status=approved` approves it without a code. One no longer pending is 20404.',
  tags: twilioTags,
  security: twilioSecurity,
  params: fetchVerificationSchema.params,
  body: form({ Status: { type: 'string', enum: ['canceled', 'approved'] } }, ['Status']),
  response: { 200: verificationResource, ...errors([20404, 20403, 60200]) },
} as const;

export const checkSchema = {
  operationId: 'twilioCheckVerification',
  summary: 'Check a code (Twilio-shaped)',
  description:
    'Checks `Code` against the verification named by `VerificationSid`, or by `To` (the client\'s most recent pending one of that number), as `POST /v1/otp/verify` does. ' +
    'A wrong code answers 200 `pending` while attempts remain; the last attempt answers `max_attempts_reached`; any check after that is 60202. ' +
    'One no longer pending, or none, is 20404.',
  tags: twilioTags,
  security: twilioSecurity,
  params: serviceParams,
  body: form({ Code: { type: 'string' }, To: { type: 'string' }, VerificationSid: { type: 'string' } }, ['Code']),
  response: { 200: checkResource, ...errors([20404, 20403, 60200, 60202]) },
} as const;
