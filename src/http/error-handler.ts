import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FieldProblem } from '../domain/error-catalogue.js';
import { UnavailableError } from '../domain/unavailable.js';
import { sendError } from './envelope.js';

interface ValidationItem {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
  keyword?: string;
}

/** Names each field a schema refused, e.g. `phoneNumber: must match pattern`. */
export function fieldProblems(validation: readonly ValidationItem[], context: string | undefined): FieldProblem[] {
  return validation.map((item) => {
    const missing = item.params?.missingProperty;
    const path = (item.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    const field = typeof missing === 'string' ? (path ? `${path}.${missing}` : missing) : path || (context ?? 'body');
    const issue = typeof missing === 'string' ? 'is required' : describe(item);
    return { field, issue };
  });
}

function describe(item: ValidationItem): string {
  const allowed = item.params?.allowedValues;
  if (item.keyword === 'enum' && Array.isArray(allowed)) return `must be one of ${allowed.join(', ')}`;
  return item.message ?? 'is invalid';
}

const badBody = new Set([
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
  'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
  'FST_ERR_CTP_BODY_TOO_LARGE',
]);

/**
 * Maps whatever a /v1 route threw to the contract's error shape: a database that did not answer in time is a
 * 503 with Retry-After (the store rolled back what it had begun); anything unexpected is a logged 500.
 */
export function v1ErrorHandler(error: FastifyError | UnavailableError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof UnavailableError) {
    request.log.warn({ reason: error.message }, 'database unavailable');
    return sendError(reply, 'UNAVAILABLE', { retryAfterSeconds: error.retryAfterSeconds });
  }
  if (error.validation) {
    return sendError(reply, 'VALIDATION_ERROR', { details: fieldProblems(error.validation, error.validationContext) });
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
    return sendError(reply, 'PAYLOAD_TOO_LARGE');
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.statusCode === 415) {
    return sendError(reply, 'UNSUPPORTED_MEDIA_TYPE');
  }
  if (badBody.has(error.code) || error instanceof SyntaxError || error.statusCode === 400) {
    return sendError(reply, 'VALIDATION_ERROR', {
      message: 'The request body is not valid JSON',
      details: [{ field: 'body', issue: 'must be a JSON object' }],
    });
  }
  request.log.error({ err: error }, 'unexpected error');
  return sendError(reply, 'INTERNAL_ERROR');
}
