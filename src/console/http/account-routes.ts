import type { FastifyInstance } from 'fastify';
import { retryAfterRepeatedFailures } from '../../oauth/token-endpoint.js';
import { sendConsoleError } from './console-errors.js';
import { sessionOf, type ConsoleSessionDeps } from './session-routes.js';

const passwordSchema = {
  hide: true,
  body: {
    type: 'object',
    required: ['current', 'password'],
    properties: { current: { type: 'string', maxLength: 1000 }, password: { type: 'string', maxLength: 1000 } },
  },
} as const;
const hidden = { hide: true } as const;

/**
 * The signed-in operator's own account: their passkeys (listed, removed) and their password (changed with the
 * current one). Behind the console's guard like every API route, so each change needs the CSRF token; each is in
 * the audit log. Making, disabling and relinking operators stays in the CLI.
 */
export function accountRoutes(app: FastifyInstance, deps: ConsoleSessionDeps): void {
  const audit = (email: string, action: string, target: string | null, outcome: string) =>
    deps.audit.record({ at: deps.clock.now().toISOString(), actor: `operator:${email}`, action, target, outcome });

  app.get('/console/api/account', { schema: hidden }, async (request, reply) => {
    const { operator } = sessionOf(request);
    const passkeys = await deps.passkeys.ofOperator(operator);
    return reply.header('cache-control', 'no-store').send({ data: { id: operator.id, email: operator.email, hasPassword: operator.passwordHash !== null, passkeys } });
  });

  app.post('/console/api/account/password', { schema: passwordSchema }, async (request, reply) => {
    const { operator, sessionId } = sessionOf(request);
    const { current, password } = request.body as { current: string; password: string };
    // Wrong current passwords count as failed sign-ins of the operator: a stolen session cannot guess it faster.
    const key = `console-email:${operator.email}`;
    const retry = retryAfterRepeatedFailures(deps.failures, key, deps.maxFailures);
    if (retry !== null) return sendConsoleError(reply, 'RATE_LIMITED', 'Too many wrong passwords; retry later', { retryAfterSeconds: retry });
    const outcome = await deps.operators.changePassword(operator, sessionId, current, password);
    if (outcome === 'wrong-password') {
      deps.failures.hit(key);
      await audit(operator.email, 'console.change-password', null, 'refused: wrong current password');
      return sendConsoleError(reply, 'VALIDATION_ERROR', 'The current password is wrong', { details: [{ field: 'current', issue: 'wrong' }] });
    }
    if (outcome !== 'changed') {
      await audit(operator.email, 'console.change-password', null, `refused: ${outcome}`);
      return sendConsoleError(reply, 'VALIDATION_ERROR', outcome, { details: [{ field: 'password', issue: outcome }] });
    }
    await audit(operator.email, 'console.change-password', null, 'ok');
    return reply.send({ data: { changed: true } });
  });

  app.delete('/console/api/account/passkeys/:id', { schema: hidden }, async (request, reply) => {
    const { operator } = sessionOf(request);
    const { id } = request.params as { id: string };
    const removed = await deps.passkeys.remove(operator, id);
    await audit(operator.email, 'console.remove-passkey', id, removed ? 'ok' : 'refused: no such passkey of theirs');
    if (!removed) return sendConsoleError(reply, 'NOT_FOUND', `no passkey ${id} of yours`);
    return reply.send({ data: { passkeys: await deps.passkeys.ofOperator(operator) } });
  });
}
