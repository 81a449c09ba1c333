import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseAdminCommand, type AdminResult } from '../../admin/commands.js';
import { sendConsoleError } from './console-errors.js';
import { sessionOf } from './session-routes.js';

/** Runs an operator command as `actor` (the CLI's own runAudited): the console changes nothing any other way. */
export type RunCommand = (actor: string, command: Parameters<typeof parseAdminCommand>[0]) => Promise<AdminResult | string>;

const hidden = { hide: true } as const;

/** A refusal of a command: an unknown thing is a 404, anything else a 400 naming what was wrong. */
function sendRefusal(reply: FastifyReply, error: string): FastifyReply {
  if (/^no (client|event|operator|block|throttle) /.test(error)) return sendConsoleError(reply, 'NOT_FOUND', error);
  return sendConsoleError(reply, 'VALIDATION_ERROR', error, { details: [{ field: 'body', issue: error }] });
}

type Params = Record<string, string>;
type Body = Record<string, unknown>;

/**
 * The console's JSON API (contract 16): thin routes that each build one operator command from the request, as the
 * CLI builds it from its arguments, check it with the same parser the admin socket uses, and run it through the
 * same function, audited under the signed-in operator's name.
 */
export function apiRoutes(app: FastifyInstance, run: RunCommand, costCurrency: string): void {
  /** `also`: what the page needs beside the command's answer (an object), added to its `data`. */
  const answer = async (request: FastifyRequest, reply: FastifyReply, command: Record<string, unknown>, also?: Record<string, unknown>) => {
    const actor = `operator:${sessionOf(request).operator.email}`;
    const result = await run(actor, command);
    if (typeof result === 'string') return sendRefusal(reply, result);
    if (!result.ok) return sendRefusal(reply, result.error);
    const data = also && typeof result.value === 'object' && result.value !== null && !Array.isArray(result.value) ? { ...result.value, ...also } : result.value;
    return reply.header('cache-control', 'no-store').send({ data });
  };
  const params = (r: FastifyRequest) => r.params as Params;
  const body = (r: FastifyRequest): Body => (typeof r.body === 'object' && r.body !== null ? (r.body as Body) : {});
  const query = (r: FastifyRequest) => r.query as Record<string, string | undefined>;

  // Overview: the figures of GET /v1/stats, every client's, and COST_CURRENCY, which their costs are in.
  app.get('/console/api/stats', { schema: hidden }, (r, reply) =>
    answer(
      r,
      reply,
      { name: 'stats', clientId: query(r).client ?? null, from: query(r).from ?? null, to: query(r).to ?? null, byProvider: query(r).byProvider === 'true' },
      { currency: costCurrency },
    ),
  );
  // Verifications and their webhooks.
  app.get('/console/api/verifications', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'verifications.find', query: query(r).q ?? '' }));
  app.post('/console/api/webhooks/:id/replay', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'webhooks.replay', id: params(r).id }));
  // Clients.
  app.get('/console/api/clients', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'clients.list' }));
  app.post('/console/api/clients', { schema: hidden }, (r, reply) => {
    const b = body(r);
    return answer(r, reply, { name: 'clients.create', clientName: b.name, scopes: b.scopes });
  });
  app.get('/console/api/clients/:id', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'clients.show', id: params(r).id }));
  for (const action of ['disable', 'rotate-secret', 'rotate-webhook-secret', 'rotate-hook-secret'] as const) {
    app.post(`/console/api/clients/:id/${action}`, { schema: hidden }, (r, reply) => answer(r, reply, { name: `clients.${action}`, id: params(r).id }));
  }
  // The relays' hooks, as `clients hooks` shows and changes them: `enable`, `disable`, and `zitadelSigningKey` (the
  // key ZITADEL showed, kept; null clears it).
  app.post('/console/api/clients/:id/hooks', { schema: hidden }, (r, reply) => {
    const { enable, disable, zitadelSigningKey } = body(r);
    return answer(r, reply, { name: 'clients.hooks', id: params(r).id, enable, disable, zitadelSigningKey });
  });
  app.patch('/console/api/clients/:id/settings', { schema: hidden }, (r, reply) =>
    answer(r, reply, { name: 'clients.update', id: params(r).id, change: body(r) }),
  );
  app.post('/console/api/clients/:id/templates/preview', { schema: hidden }, (r, reply) =>
    answer(r, reply, { name: 'clients.templates.preview', id: params(r).id, locale: body(r).locale, template: body(r).template, channel: body(r).channel }),
  );
  app.put('/console/api/clients/:id/templates/:locale', { schema: hidden }, (r, reply) =>
    answer(r, reply, { name: 'clients.templates.set', id: params(r).id, locale: params(r).locale, template: body(r).template, channel: body(r).channel }),
  );
  app.delete('/console/api/clients/:id/templates/:locale', { schema: hidden }, (r, reply) =>
    answer(r, reply, { name: 'clients.templates.remove', id: params(r).id, locale: params(r).locale, channel: query(r).channel }),
  );
  app.post('/console/api/clients/:id/test-numbers', { schema: hidden }, (r, reply) =>
    answer(r, reply, { name: 'clients.test-numbers.add', id: params(r).id, number: body(r).number, code: body(r).code }),
  );
  app.delete('/console/api/clients/:id/test-numbers/:number', { schema: hidden }, (r, reply) =>
    answer(r, reply, { name: 'clients.test-numbers.remove', id: params(r).id, number: params(r).number }),
  );
  // Fraud: blocks and throttles, lists.
  app.get('/console/api/blocks', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'blocks.list' }));
  app.post('/console/api/blocks/lift', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'blocks.lift', prefix: body(r).prefix }));
  app.get('/console/api/lists', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'lists.show' }));
  // The risk rules: their modes and, over the last 7 days, what each refused or shadowed and how many verified later.
  app.get('/console/api/rules', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'rules.list' }));
  app.get('/console/api/verdicts', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'verdicts', from: null, to: null, clientId: null }));
  app.post('/console/api/rules', { schema: hidden }, (r, reply) => {
    const b = body(r);
    return answer(r, reply, { name: 'rules.set', rule: b.rule, mode: b.mode, clientId: b.clientId ?? null });
  });
  app.post('/console/api/lists', { schema: hidden }, (r, reply) => {
    const b = body(r);
    return answer(r, reply, { name: 'lists.add', kind: b.kind, value: b.value, clientId: b.clientId ?? null, note: b.note ?? null });
  });
  app.post('/console/api/lists/remove', { schema: hidden }, (r, reply) => {
    const b = body(r);
    return answer(r, reply, { name: 'lists.remove', kind: b.kind, value: b.value, clientId: b.clientId ?? null });
  });
  // Providers, their routes (contract 17), and the audit log.
  app.get('/console/api/providers', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'providers.status' }));
  app.get('/console/api/routes', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'routes.list' }));
  app.put('/console/api/routes', { schema: hidden }, (r, reply) => {
    const { channel, destination, providers, weights, failoverAfterSeconds, policy } = body(r);
    return answer(r, reply, { name: 'routes.set', channel, destination, providers, weights, failoverAfterSeconds, policy });
  });
  app.post('/console/api/routes/remove', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'routes.remove', channel: body(r).channel, destination: body(r).destination }));
  app.get('/console/api/audit', { schema: hidden }, (r, reply) => answer(r, reply, { name: 'audit.list', limit: Number(query(r).limit ?? 100) }));
}
