import type { FastifyInstance, FastifyReply } from 'fastify';
import type { NetworkCallbackOutcome, SilentService } from '../../domain/silent-service.js';

/**
 * The device's side of CAMARA Number Verification (contract 19): its check URL, which sends it to the operator,
 * and the operator's callback, which answers a plain page telling the person what happened. No token: the device
 * is not a client; the check URL names an unguessable verification id, and the callback's state is the service's
 * own (a forged one changes nothing). Neither page shows a number, a code or a state.
 */

const startSchema = {
  operationId: 'silentCamaraStart',
  summary: "Begin a SILENT verification's CAMARA check (opened by the device)",
  description:
    "The `checkUrl` of a `SILENT` verification with `SILENT_PROVIDER=camara`: the device opens it over its mobile data and is redirected (302) to its operator's authorization endpoint. A verification that no longer waits for the check answers a page saying so.",
  tags: ['Silent verification'],
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
  response: {
    302: { description: "To the operator's authorization endpoint." },
    200: htmlPage('The check is over.'),
    404: htmlPage('No such check.'),
  },
} as const;

const callbackSchema = {
  operationId: 'silentCamaraCallback',
  summary: "The operator's redirect back after a CAMARA check (the device)",
  description: 'Where the operator sends the device back (`code` and `state`, or `error` and `state`). Answers a plain page with the outcome.',
  tags: ['Silent verification'],
  querystring: { type: 'object', properties: { code: { type: 'string' }, state: { type: 'string' }, error: { type: 'string' } } },
  response: { 200: htmlPage('The outcome, in plain words.'), 400: htmlPage('Not a callback of this service: nothing was changed.') },
} as const;

function htmlPage(description: string) {
  return { description, content: { 'text/html': { schema: { type: 'string' } } } } as const;
}

/** The page the device shows, in plain words. */
function page(reply: FastifyReply, status: number, title: string, text: string): FastifyReply {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    // The callback's address holds the operator's code: no page it leads to may see it.
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', "default-src 'none'")
    .type('text/html; charset=utf-8')
    .send(body);
}

const pages: Readonly<Record<NetworkCallbackOutcome['kind'] | 'wifi', readonly [number, string, string]>> = {
  verified: [200, 'Your number is verified', 'Your mobile operator confirmed your phone number. You can go back to the app.'],
  'not-verified': [200, 'Your number could not be confirmed', 'Your mobile operator did not confirm this phone number. Go back to the app: it will send you a code instead if it can.'],
  wifi: [
    200,
    'Your number could not be checked',
    'Your mobile operator could not see this phone on its network, which happens on Wi-Fi. Go back to the app: it will send you a code instead if it can. Next time, turn Wi-Fi off before the check.',
  ],
  failed: [200, 'Your number could not be checked', 'Your mobile operator did not answer in time. Go back to the app: it will send you a code instead if it can.'],
  over: [200, 'This check is over', 'This check has already ended. Go back to the app.'],
  forged: [400, 'This link is not valid', 'This link was not made by this service. Nothing was changed.'],
};

export function silentCamaraRoutes(app: FastifyInstance, silent: SilentService): void {
  app.get<{ Params: { id: string } }>('/silent/camara/:id', { schema: startSchema }, async (request, reply) => {
    if (request.params.id === 'callback') return page(reply, ...pages.forged);
    const start = await silent.beginNetworkCheck(request.params.id);
    if (start.kind === 'redirect') return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(start.url, 302);
    if (start.kind === 'over') return page(reply, ...pages.over);
    return page(reply, 404, 'No such check', 'This check does not exist. Go back to the app.');
  });

  app.get<{ Querystring: { code?: string; state?: string; error?: string } }>('/silent/camara/callback', { schema: callbackSchema }, async (request, reply) => {
    const { code, state, error } = request.query;
    if (typeof state !== 'string' || state === '') return page(reply, ...pages.forged);
    const outcome = await silent.networkCallback({ state, code: code ?? null, error: error ?? null });
    return page(reply, ...pages[outcome.kind === 'not-verified' && outcome.wifi ? 'wifi' : outcome.kind]);
  });
}
