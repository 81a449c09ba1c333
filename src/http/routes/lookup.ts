import type { FastifyInstance } from 'fastify';
import type { LookupService } from '../../domain/lookup-service.js';
import { grantOf } from '../auth-hook.js';
import { sendError } from '../envelope.js';
import { numberOf } from '../number-input.js';
import { lookupBodySchema, lookupEnvelope, publicLookup } from '../lookup-record.js';
import { idParamsSchema, v1Answers } from '../schemas.js';

const tags = ['Number lookup'];

const requestSchema = {
  operationId: 'requestLookup',
  summary: 'Look a number up',
  description:
    "The number's validity, line type, original carrier and time zones, from the number metadata installed with the service (Google's libphonenumber data): no network, no cost. " +
    'A number that is not valid for its country is a lookup with `valid: false`, not an error. The lookup is kept, readable by its id, for RETENTION_DAYS.',
  tags,
  body: lookupBodySchema,
  response: v1Answers(lookupEnvelope('Lookup completed'), ['INVALID_PHONE_NUMBER'], { jsonBody: true }),
} as const;

const fetchSchema = {
  operationId: 'getLookup',
  summary: 'Get a lookup',
  description: "A lookup made earlier, as it was answered. Another client's lookup is a 404.",
  tags,
  params: idParamsSchema,
  response: v1Answers(lookupEnvelope('Lookup fetched'), ['NOT_FOUND'], { jsonBody: false }),
} as const;

/** POST /v1/lookup/request and GET /v1/lookup/:id (contract 11). */
export function lookupRoutes(app: FastifyInstance, lookups: LookupService): void {
  app.post<{ Body: { countryCode?: string; phoneNumber: string } }>(
    '/v1/lookup/request',
    { schema: requestSchema, config: { operation: 'requestLookup' } },
    async (request, reply) => {
      const number = numberOf(request.body, reply);
      if (!number) return reply;
      const { countryCode, phoneNumber } = number;
      const lookup = await lookups.request({ clientId: grantOf(request).clientId, countryCode, phoneNumber });
      return { status: true, message: 'Lookup completed', data: publicLookup(lookup) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/lookup/:id',
    { schema: fetchSchema, config: { operation: 'fetchLookup' } },
    async (request, reply) => {
      const lookup = await lookups.fetch(grantOf(request).clientId, request.params.id);
      if (!lookup) return sendError(reply, 'NOT_FOUND', { message: 'Lookup not found' });
      return { status: true, message: 'Lookup fetched', data: publicLookup(lookup) };
    },
  );
}
