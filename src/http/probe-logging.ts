import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

const probePaths = new Set(['/healthz', '/readyz']);

/** Whether a request is a health probe (query string aside). */
export function isProbe(url: string): boolean {
  return probePaths.has(url.split('?', 1)[0] ?? url);
}

/**
 * Fastify's request log lines, with probes at debug: load balancers and orchestrators ask /healthz and /readyz
 * every few seconds, and at info those lines would bury everything else. Other requests log as Fastify does.
 */
export class ProbeQuietLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (!isProbe(request.url)) return super.incomingRequest(request, reply);
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error || !isProbe(request.url)) return super.requestCompleted(error, request, reply);
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
