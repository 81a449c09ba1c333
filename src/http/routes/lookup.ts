import type { FastifyInstance } from 'fastify';
import type { LookupService } from '../../domain/lookup-service.js';
import { grantOf } from '../auth-hook.js';
import { sendError } from '../envelope.js';
import { lookupBodySchema, lookupResponses, publicLookup } from '../lookup-record.js';
import { idParamsSchema } from '../schemas.js';

/** POST /v1/lookup/request and GET /v1/lookup/:id (contract 11). */
export function lookupRoutes(app: FastifyInstance, lookups: LookupService): void {
  app.post<{ Body: { countryCode: string; phoneNumber: string } }>(
    '/v1/lookup/request',
    { schema: { body: lookupBodySchema, response: lookupResponses }, config: { operation: 'requestLookup' } },
    async (request) => {
      const { countryCode, phoneNumber } = request.body;
      const lookup = await lookups.request({ clientId: grantOf(request).clientId, countryCode, phoneNumber });
      return { status: true, message: 'Lookup completed', data: publicLookup(lookup) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/lookup/:id',
    { schema: { params: idParamsSchema, response: lookupResponses }, config: { operation: 'fetchLookup' } },
    async (request, reply) => {
      const lookup = await lookups.fetch(grantOf(request).clientId, request.params.id);
      if (!lookup) return sendError(reply, 'NOT_FOUND', { message: 'Lookup not found' });
      return { status: true, message: 'Lookup fetched', data: publicLookup(lookup) };
    },
  );
}
