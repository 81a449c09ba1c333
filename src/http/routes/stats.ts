import type { FastifyInstance } from 'fastify';
import type { StatsService } from '../../domain/stats-service.js';
import { defaultStatsDays, maxStatsDays, type DailyTraffic } from '../../domain/stats.js';
import { grantOf } from '../auth-hook.js';
import { sendError } from '../envelope.js';
import { successEnvelope } from '../record-schema.js';
import { v1Answers } from '../schemas.js';

const message = 'Stats retrieved';

/** One day's traffic towards one country: the response schema serializes exactly these fields. */
const dailyTrafficSchema = {
  type: 'object',
  required: ['day', 'regionCode', 'countryCode', 'channel', 'sends', 'delivered', 'verified', 'cost', 'costPerVerified'],
  properties: {
    day: { type: 'string', description: 'The UTC day the verifications were created, YYYY-MM-DD.' },
    regionCode: {
      type: ['string', 'null'],
      description:
        'ISO 3166 alpha-2 region of the numbers (NG), `001` for non-geographic numbers (+800, +882...). Null only for verifications made before the service stored regions, under a calling code several regions share (+1, +44).',
    },
    countryCode: { type: 'string', description: 'The country calling code, `+NNN`.' },
    channel: {
      type: 'string',
      description:
        "The channel of the verifications' latest send, as `delivery.channel` (`SMS`, `CALL`, ...): a verification counts, all its sends included, under the channel its workflow ended on.",
    },
    sends: { type: 'integer', description: 'Messages and calls asked for: 1 per verification created, 1 more per resend and per workflow step.' },
    delivered: { type: 'integer', description: 'Verifications whose latest send a delivery receipt marked `DELIVERED`.' },
    verified: { type: 'integer', description: 'Verifications that ended `SUCCESS`.' },
    cost: {
      type: 'string',
      description:
        "What their sends cost, a decimal string in the service's currency (each record's `cost.currency`): the providers' reported prices, else the operator's imported ones; a send of unknown price adds nothing.",
    },
    costPerVerified: { type: ['string', 'null'], description: '`cost` divided by `verified`, to 6 decimals; null when none was verified.' },
  },
} as const;

const exampleRows: DailyTraffic[] = [
  { day: '2026-11-23', regionCode: 'GH', countryCode: '+233', channel: 'SMS', sends: 41, delivered: 38, verified: 33, cost: '1.1685', costPerVerified: '0.035409' },
  { day: '2026-11-23', regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 1207, delivered: 1102, verified: 964, cost: '4.828', costPerVerified: '0.005008' },
  { day: '2026-11-24', regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 1311, delivered: 1190, verified: 1043, cost: '5.244', costPerVerified: '0.005028' },
];

/** One risk rule's figures (`by=factor`). */
const verdictSchema = {
  type: 'object',
  required: ['rule', 'factor', 'refused', 'shadowed', 'verifiedLater'],
  properties: {
    rule: { type: 'string', description: 'The risk rule.' },
    factor: { type: 'string', description: 'The risk factor it names when it objects.' },
    refused: { type: 'integer', description: "The client's creates it refused." },
    shadowed: { type: 'integer', description: "The client's sends it would have refused in shadow mode (the code was sent)." },
    verifiedLater: {
      type: 'integer',
      description: 'Of those, how many numbers had a code verified: a shadowed send its own, a refused create a later create of the same number.',
    },
  },
} as const;

const verdictsEnvelope = successEnvelope(
  message,
  { type: 'array', items: { anyOf: [dailyTrafficSchema, verdictSchema] }, description: 'Days and countries; with `by=factor`, one entry per risk rule.' } as const,
  exampleRows,
);

const day = (what: string) => ({ type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: what, examples: ['2026-11-23'] }) as const;

const fetchSchema = {
  operationId: 'getStats',
  summary: "The client's traffic by day and country",
  description:
    "The client's own verifications per UTC day of creation, country (region and calling code): the messages and calls asked for, those delivered and those verified, " +
    `test numbers left out. Both days are included; by default the last ${defaultStatsDays} days, today (UTC) included; at most ${maxStatsDays} days at once. ` +
    'A day that is not a calendar day or is before 0001-01-01, or `from` after `to`, is a 400 `VALIDATION_ERROR` naming the parameter.',
  tags: ['Stats'],
  querystring: {
    type: 'object',
    properties: {
      from: day(`The first day counted (UTC), YYYY-MM-DD; default: ${defaultStatsDays - 1} days before \`to\`.`),
      to: day('The last day counted (UTC), YYYY-MM-DD; default: today.'),
      by: {
        type: 'string',
        enum: ['factor'],
        description: "`factor`: per risk rule, the client's creates it refused, the sends it would have refused in shadow mode, and how many of those numbers had a code verified later.",
      },
    },
  },
  response: v1Answers(verdictsEnvelope, [], { jsonBody: false }),
} as const;

/** GET /v1/stats (contract 10): the calling client's figures. */
export function statsRoutes(app: FastifyInstance, stats: StatsService): void {
  app.get<{ Querystring: { from?: string; to?: string; by?: 'factor' } }>(
    '/v1/stats',
    { schema: fetchSchema, config: { operation: 'fetchStats' } },
    async (request, reply) => {
      const { from, to, by } = request.query;
      const clientId = grantOf(request).clientId;
      const outcome = by === 'factor' ? await stats.factors(clientId, { from, to }) : await stats.forClient(clientId, { from, to });
      if (outcome.kind === 'invalid') return sendError(reply, 'VALIDATION_ERROR', { details: outcome.problems });
      return { status: true, message, data: outcome.rows };
    },
  );
}
