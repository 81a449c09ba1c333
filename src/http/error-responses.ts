import { errorCatalogue, type ErrorCode } from '../domain/error-catalogue.js';
import { riskFactors, ruleModes } from '../domain/risk.js';
import { examples } from './api-examples.js';
import { errorBody, type ErrorOptions } from './envelope.js';
import { recordRef } from './record-schema.js';

/** The one error shape (contract 5), as a response schema: it decides what an error answer may carry. */
export const errorSchema = {
  type: 'object',
  description: 'The error shape of every answer but the token endpoints\'.',
  required: ['status', 'message', 'error'],
  properties: {
    status: { type: 'boolean', enum: [false] },
    message: { type: 'string', description: 'Human-readable text; may change, match on `error.code`.' },
    error: {
      type: 'object',
      required: ['code'],
      properties: {
        code: { type: 'string', enum: Object.keys(errorCatalogue) },
        details: {
          type: 'array',
          description: 'What was wrong, one entry per field or rule.',
          items: {
            type: 'object',
            properties: {
              field: { type: 'string' },
              issue: { type: 'string' },
              rule: { type: 'string', description: 'The rule that refused, e.g. `blocked` (a block list), or whose risk factor an entry names.' },
              factor: {
                type: 'string',
                enum: riskFactors,
                description: 'Why the send was judged risky: the risk factor of the rule (`rule`) that refused it. One entry per rule that objected.',
              },
              mode: { type: 'string', enum: ruleModes, description: 'The rule\'s mode: `enforce` refused the send.' },
              value: { type: 'string', description: 'What the rule refused, e.g. the listed number or prefix.' },
              limit: { type: 'string', description: 'The `budget` rule: the spend limit of the period, a decimal amount in the service\'s currency.' },
              spent: { type: 'string', description: 'The `budget` rule: what the client\'s sends have cost in the period so far.' },
              period: { type: 'string', enum: ['day', 'month'], description: 'The `budget` rule: the UTC day or month the limit is for.' },
              regionCode: { type: 'string', description: 'The `conversion` rule of a throttled country: the country (ISO 3166 alpha-2).' },
              carrier: {
                type: 'string',
                description: 'The `conversion` rule: the mobile network throttled, as number lookup names it, when the throttle is one network\'s rather than the whole country\'s.',
              },
            },
          },
        },
      },
    },
    // Where the operation says so (a wrong code, a verification no longer pending).
    data: recordRef,
  },
} as const;

/**
 * When each code is answered, as the reference says it. Typed over the whole catalogue, so that a new code
 * cannot be added without saying when a client gets it.
 */
const whenAnswered: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'Malformed JSON, or a missing or ill-typed field; `details` name each field.',
  INVALID_PHONE_NUMBER: 'Not a valid number for that country code.',
  NUMBER_NOT_ALLOWED: 'The destination is refused: its country is not among the allowed ones (ALLOWED_COUNTRIES, or the client\'s own list), or its line type is blocked (BLOCKED_LINE_TYPES), or its prefix is blocked for too many verifications towards it (PREFIX_LIMIT_COUNT, until PREFIX_BLOCK_SECONDS pass or the operator lifts it), or it is on a block list (`details: [{ rule: "blocked", value }]`); `details` name the rule and the value refused.',
  UNAUTHORIZED:
    'No bearer token (`WWW-Authenticate: Bearer`), or a malformed, expired or revoked one (`WWW-Authenticate: Bearer error="invalid_token"`).',
  INSUFFICIENT_SCOPE: 'The token lacks the scope (`WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`).',
  CALLBACK_FORBIDDEN: 'The provider\'s signature is missing, wrong or stale; nothing was changed.',
  NOT_FOUND: 'Unknown id, another client\'s id, or an unknown route.',
  VERIFICATION_NOT_PENDING: 'The verification is `SUCCESS`, `FAILED` or `EXPIRED`; `data` is the record.',
  IDEMPOTENCY_KEY_REUSED: 'The `Idempotency-Key` was used in the last 24 h with a different body.',
  BAD_REQUEST: 'A request the HTTP server cannot parse (malformed request line or Host, Content-Length with Transfer-Encoding).',
  REQUEST_TIMEOUT: 'The request was not received in time (`HEADERS_TIMEOUT_MS`, `REQUEST_TIMEOUT_MS`).',
  PAYLOAD_TOO_LARGE: 'The body is over 16 KiB.',
  UNSUPPORTED_MEDIA_TYPE: 'The body is not `application/json`.',
  HEADERS_TOO_LARGE: 'The request headers are over the server\'s limit.',
  OTP_MISMATCH: 'Wrong code; `data` is the record, `FAILED` (`MAX_ATTEMPTS`) after the last allowed attempt.',
  CAPTCHA_REQUIRED: 'The client has a CAPTCHA (`clients update --captcha`) and the create carried no `captchaToken`: show the widget and send its token.',
  CAPTCHA_FAILED: 'The CAPTCHA provider refused the token, its score was under the client\'s minimum, or the token was used before: show the widget again.',
  RATE_LIMITED:
    'A limit was hit; `Retry-After` says when to come back, in seconds. The client\'s budget refuses with `details: [{ rule: "budget", limit, spent, period }]` and `Retry-After` to the next UTC day or month; a throttled country with `details: [{ rule: "conversion", regionCode, carrier }]` (`carrier` when the throttle is one mobile network\'s).',
  INTERNAL_ERROR: 'Anything unexpected (logged with the request id, `x-request-id`).',
  UNAVAILABLE: 'The database, the client\'s CAPTCHA provider, or the verify service that sent the code, did not answer in time; nothing was half done. `Retry-After` says when to come back.',
};

/** What an example of each code carries beyond the catalogue's text, as the routes send it. */
const exampleOptions: Partial<Record<ErrorCode, ErrorOptions>> = {
  VALIDATION_ERROR: { details: [{ field: 'phoneNumber', issue: 'must match pattern "^[0-9]{1,17}$"' }] },
  INVALID_PHONE_NUMBER: { details: [{ field: 'phoneNumber', issue: 'is not a valid number for country code +234' }] },
  NOT_FOUND: { message: 'Verification not found' },
  OTP_MISMATCH: { data: examples.mismatch },
  VERIFICATION_NOT_PENDING: { message: 'The verification is SUCCESS', data: examples.notPending },
};

/** Response headers some codes come with. */
const headersOf: Partial<Record<ErrorCode, Record<string, { type: 'string'; description: string }>>> = {
  UNAUTHORIZED: { 'WWW-Authenticate': { type: 'string', description: '`Bearer`, or `Bearer error="invalid_token"`.' } },
  INSUFFICIENT_SCOPE: {
    'WWW-Authenticate': { type: 'string', description: '`Bearer error="insufficient_scope", scope="<the scopes that would do>"`.' },
  },
  RATE_LIMITED: { 'Retry-After': { type: 'string', description: 'Seconds to wait.' } },
  UNAVAILABLE: { 'Retry-After': { type: 'string', description: 'Seconds to wait.' } },
};

/**
 * Response schemas, one per HTTP status, for the codes a route answers: each is the error shape (so it
 * serializes as before), named codes and an example of each. Used as `schema.response` entries.
 */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, object> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, object> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Record<string, object> = {};
    for (const code of group) Object.assign(headers, headersOf[code]);
    responses[String(status)] = {
      ...errorSchema,
      description: group.map((code) => `\`${code}\`: ${whenAnswered[code]}`).join('\n\n'),
      properties: {
        ...errorSchema.properties,
        error: { ...errorSchema.properties.error, properties: { ...errorSchema.properties.error.properties, code: { type: 'string', enum: group } } },
      },
      ...(Object.keys(headers).length > 0 && { headers }),
      'x-examples': Object.fromEntries(group.map((code) => [code, { summary: code, value: errorBody(code, exampleOptions[code]) }])),
    };
  }
  return responses;
}

/** What every /v1 route can answer before its handler runs: the auth hook, the HTTP server and the database. */
export const v1CommonErrors: readonly ErrorCode[] = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'INSUFFICIENT_SCOPE',
  'RATE_LIMITED',
  'REQUEST_TIMEOUT',
  'HEADERS_TOO_LARGE',
  'INTERNAL_ERROR',
  'UNAVAILABLE',
];

/** What a /v1 route with a JSON body can answer about the body itself. */
export const bodyErrors: readonly ErrorCode[] = ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
