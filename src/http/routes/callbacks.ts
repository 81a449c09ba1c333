import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CallbackRequest, DeliveryReceipt, Provider } from '../../channels/provider-port.js';
import { sendError } from '../envelope.js';
import { errorResponses } from '../error-responses.js';

export interface CallbackRouteDeps {
  /** PUBLIC_BASE_URL without its trailing slash: providers sign the URL they called, which is this plus the path. */
  readonly publicBaseUrl: string | null;
  /** A configured provider by name. */
  readonly provider: (name: string) => Pick<Provider, 'name' | 'account' | 'verifyCallback' | 'handshake'> | undefined;
  /**
   * The domain's receipt script (DeliveryService.recordReceipt), with the provider's account: resolves once
   * committed, the receipt recorded or, for a send not known yet, kept (parked) until its acceptance is.
   */
  readonly recordReceipt: (provider: string, receipt: DeliveryReceipt, account: string) => Promise<'recorded' | 'parked'>;
}

const callbackSchema = {
  summary: 'Delivery receipt from a provider',
  description:
    'Where a provider reports what became of a message or call (`{PUBLIC_BASE_URL}/callbacks/{provider}`, more path after it is allowed). ' +
    'Authenticated by the provider\'s own scheme (Twilio `X-Twilio-Signature`, Vonage signed requests, Termii `X-Termii-Signature`, ...), not by a bearer token: ' +
    'a bad or missing signature is 403 and changes nothing. Answered 2xx only once what it says is committed; a repeat changes nothing twice; a receipt for a message not known yet is kept and applies once its send is recorded (one never sent is 2xx and, in the end, ignored). ' +
    'The body is whatever the provider sends. Meta\'s subscription handshake (`GET /callbacks/meta?hub.mode=subscribe&hub.verify_token=T&hub.challenge=C`) is answered 200 with `C` as plain text when `T` is `META_WEBHOOK_VERIFY_TOKEN`, else 403.',
  tags: ['Provider callbacks'],
  params: {
    type: 'object',
    properties: { provider: { type: 'string', description: 'A configured provider: `twilio`, `vonage`, `infobip`, `africastalking`, `termii`, `http`, `meta`, ...' } },
  },
  response: {
    200: {
      type: 'object',
      description: 'Recorded (or ignored, for a message this service did not send).',
      required: ['status', 'message'],
      properties: { status: { type: 'boolean', enum: [true] }, message: { type: 'string' } },
      'x-examples': { recorded: { value: { status: true, message: 'Callback recorded' } } },
    },
    ...errorResponses(['VALIDATION_ERROR', 'CALLBACK_FORBIDDEN', 'NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'INTERNAL_ERROR', 'UNAVAILABLE']),
  },
} as const;

/** The most a callback body may hold; providers send a few hundred bytes. */
const callbackBodyLimit = 64 * 1024;

/**
 * POST /callbacks/{provider}[/...] (and GET, which some providers use for receipts): no bearer token; the
 * provider's own signature instead (403 when bad, nothing changed). Answered 2xx only once every receipt in it
 * is committed; a repeat changes nothing twice; a receipt for a message we never sent is acknowledged and ignored.
 */
export async function callbackRoutes(app: FastifyInstance, deps: CallbackRouteDeps): Promise<void> {
  // Signatures are over the raw bytes: keep the body as it came, whatever its type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: callbackBodyLimit }, (_req, body, done) => done(null, body));
  const handler = async (request: FastifyRequest<{ Params: { provider: string } }>, reply: import('fastify').FastifyReply) => {
    const provider = deps.provider(request.params.provider);
    if (!provider?.verifyCallback) return sendError(reply, 'NOT_FOUND', { message: 'No such provider callback' });
    const received = callbackRequest(request, deps.publicBaseUrl);
    if (request.method === 'GET' && provider.handshake) {
      // A subscription handshake (Meta's hub.challenge): its token checked, the text goes back as it is.
      const answer = provider.handshake(received);
      if (answer.kind === 'challenge') return reply.type('text/plain; charset=utf-8').send(answer.body);
      request.log.warn({ provider: provider.name, reason: answer.reason }, 'provider handshake refused');
      return sendError(reply, 'CALLBACK_FORBIDDEN');
    }
    const result = provider.verifyCallback(received);
    if (result.kind === 'forbidden') {
      request.log.warn({ provider: provider.name, reason: result.reason }, 'provider callback refused');
      return sendError(reply, 'CALLBACK_FORBIDDEN');
    }
    if (result.kind === 'malformed') {
      request.log.warn({ provider: provider.name, reason: result.reason }, 'provider callback malformed');
      return sendError(reply, 'VALIDATION_ERROR', { message: 'The callback body is not one the provider sends' });
    }
    let parked = 0;
    for (const receipt of result.receipts) {
      if ((await deps.recordReceipt(provider.name, receipt, provider.account ?? '')) === 'parked') parked += 1;
    }
    // Its send's acceptance may not be committed yet (the provider reported at once, or answered the send late):
    // kept, it applies when that commits. One for a message this service never sent is pruned unapplied.
    if (parked > 0) request.log.info({ provider: provider.name, parked }, 'receipts for messages not known yet; kept for their send');
    return { status: true, message: 'Callback recorded' };
  };
  app.route({ method: ['POST', 'GET'], url: '/callbacks/:provider', schema: callbackSchema, handler });
  // The same operation with more path after the provider's name, which the reference cannot name as a parameter.
  app.route({ method: ['POST', 'GET'], url: '/callbacks/:provider/*', schema: { hide: true }, handler });
}

function callbackRequest(request: FastifyRequest, publicBaseUrl: string | null): CallbackRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  const base = publicBaseUrl ?? `${request.protocol}://${request.host}`;
  return {
    method: request.method,
    url: `${base}${request.url}`,
    headers,
    rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
  };
}
