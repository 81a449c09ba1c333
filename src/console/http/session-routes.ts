import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { AuditLog } from '../audit-log.js';
import { csrfTokenMatches, csrfTokenOf, originAllowed } from '../csrf.js';
import type { OperatorRecord, OperatorService, SignedIn } from '../operator-service.js';
import { relyingPartyOf, type Passkeys, type RelyingParty } from '../passkeys.js';
import { retryAfterRepeatedFailures, type FailureCounter } from '../../oauth/token-endpoint.js';
import type { Clock } from '../../domain/ports.js';
import { clearedCookie, cookieValue, sessionCookie, sessionCookieName } from './cookies.js';
import { sendConsoleError, sendForgedRequest, sendPasskeyExists } from './console-errors.js';

/** What sign-in, sessions and the per-request checks use. */
export interface ConsoleSessionDeps {
  readonly operators: OperatorService;
  readonly passkeys: Passkeys;
  readonly audit: AuditLog;
  readonly clock: Clock;
  /** The token endpoint's failure counter and AUTH_FAILURE_LIMIT: failed sign-ins are slowed down as it slows guessing. */
  readonly failures: FailureCounter;
  readonly maxFailures: number;
  /** CONSOLE_ORIGIN (or PUBLIC_BASE_URL's); null: the origin each request names (development). */
  readonly origin: string | null;
  /** Whether the session cookie is Secure (outside development, or with an https origin). */
  readonly secureCookies: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in operator and their session id, set by the console's session check. */
    consoleSession: { readonly operator: OperatorRecord; readonly sessionId: string } | null;
  }
}

/** The console's origin for a request. */
export function consoleOrigin(deps: Pick<ConsoleSessionDeps, 'origin'>, request: FastifyRequest): string {
  return deps.origin ?? `${request.protocol}://${request.host}`;
}

function rpOf(deps: ConsoleSessionDeps, request: FastifyRequest): RelyingParty {
  return relyingPartyOf(consoleOrigin(deps, request));
}

const changeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every request to the console API: a request that changes anything must come from the console's own origin
 * (sign-in included, so another site cannot sign a browser into an account of its choosing); past sign-in, it
 * needs a live session, and a change also the session's CSRF token.
 */
export function consoleGuard(deps: ConsoleSessionDeps, open: ReadonlySet<string>) {
  const cookie = sessionCookieName(deps.secureCookies);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    request.consoleSession = null;
    const change = changeMethods.has(request.method);
    if (change && !originAllowed(request.headers.origin, consoleOrigin(deps, request))) {
      return sendForgedRequest(reply, 'this request did not come from the console\'s own page (Origin)');
    }
    if (open.has(request.routeOptions.url ?? '')) return undefined;
    const sessionId = cookieValue(request.headers.cookie, cookie);
    const operator = sessionId ? await deps.operators.session(sessionId) : null;
    if (!sessionId || !operator) return sendConsoleError(reply, 'UNAUTHORIZED', 'Sign in to the console first');
    if (change) {
      const token = request.headers['x-csrf-token'];
      if (!csrfTokenMatches(sessionId, typeof token === 'string' ? token : undefined)) {
        return sendForgedRequest(reply, 'the X-CSRF-Token header is missing or wrong');
      }
    }
    request.consoleSession = { operator, sessionId };
    return undefined;
  };
}

/** The signed-in operator of a request that passed the guard. */
export function sessionOf(request: FastifyRequest): { readonly operator: OperatorRecord; readonly sessionId: string } {
  if (!request.consoleSession) throw new Error('console route reached without the session check');
  return request.consoleSession;
}

/** The paths reachable before sign-in (each still Origin-checked). */
export const openPaths = new Set(['/console/api/sign-in', '/console/api/setup', '/console/api/passkey-sign-in', '/console/api/passkey-sign-in/options']);

const signInSchema = {
  hide: true,
  body: {
    type: 'object',
    required: ['email', 'password'],
    properties: { email: { type: 'string', maxLength: 320 }, password: { type: 'string', maxLength: 1000 } },
  },
} as const;
const setupSchema = {
  hide: true,
  body: {
    type: 'object',
    required: ['token', 'password'],
    properties: { token: { type: 'string', maxLength: 200 }, password: { type: 'string', maxLength: 1000 } },
  },
} as const;
const credentialSchema = { hide: true, body: { type: 'object', required: ['credential'], properties: { credential: { type: 'object' } } } } as const;
const hidden = { hide: true } as const;

/** Sign-in (password, passkey, one-time link), sign-out, the session, and adding a passkey. */
/** How many times AUTH_FAILURE_LIMIT one address may fail sign-ins in a window, over every email it tries. */
const signInAddressShare = 3;

export function sessionRoutes(app: FastifyInstance, deps: ConsoleSessionDeps): void {
  const cookie = sessionCookieName(deps.secureCookies);
  const audit = (actor: string, action: string, outcome: string, target: string | null = null) =>
    deps.audit.record({ at: deps.clock.now().toISOString(), actor, action, target, outcome });
  const signedIn = (reply: FastifyReply, s: SignedIn) =>
    reply
      .header('set-cookie', sessionCookie(cookie, s.sessionId, deps.secureCookies))
      .header('cache-control', 'no-store')
      .send({ operator: { id: s.operator.id, email: s.operator.email }, csrfToken: csrfTokenOf(s.sessionId) });

  app.post('/console/api/sign-in', { schema: signInSchema }, async (request, reply) => {
    const { email, password } = request.body as { email: string; password: string };
    // Counted per email across addresses (a password guessed from many machines) and per address whatever the
    // email (one machine trying many operators, which unknown emails made free); the counter bounds long keys.
    const named = email.trim().toLowerCase();
    const byEmail = `console-email:${named}`;
    const byAddress = `console-address:${request.ip}`;
    const address = { key: byAddress, max: deps.maxFailures * signInAddressShare };
    const retry = [{ key: byEmail, max: deps.maxFailures }, address]
      .map((k) => retryAfterRepeatedFailures(deps.failures, k.key, k.max))
      .find((r) => r !== null);
    // What the audit log keeps of an attempt: the email as typed (cut to a sane length) and where it came from.
    const attempted = `${named.slice(0, 254)} from ${request.ip}`;
    if (retry !== undefined && retry !== null) {
      await audit(`address:${request.ip}`, 'console.sign-in', 'throttled', attempted);
      return sendConsoleError(reply, 'RATE_LIMITED', 'Too many failed sign-ins; retry later', { retryAfterSeconds: retry });
    }
    const s = await deps.operators.signIn(email, password);
    if (!s) {
      deps.failures.hit(byEmail);
      deps.failures.hit(byAddress);
      await audit(`address:${request.ip}`, 'console.sign-in', 'failed', attempted);
      return sendConsoleError(reply, 'UNAUTHORIZED', 'The email or password is wrong, or the operator is disabled');
    }
    await audit(`operator:${s.operator.email}`, 'console.sign-in', 'ok (password)');
    return signedIn(reply, s);
  });

  app.post('/console/api/setup', { schema: setupSchema }, async (request, reply) => {
    const { token, password } = request.body as { token: string; password: string };
    const s = await deps.operators.setUp(token, password);
    if (typeof s === 'string') return sendConsoleError(reply, 'VALIDATION_ERROR', s, { details: [{ field: 'password', issue: s }] });
    await audit(`operator:${s.operator.email}`, 'console.set-password', 'ok');
    return signedIn(reply, s);
  });

  // Each options request stores a challenge before anyone is known: counted per address, so that one machine
  // cannot fill the table (as many as the sign-in failures an address may have, in the same window).
  app.post('/console/api/passkey-sign-in/options', { schema: hidden }, async (request, reply) => {
    const key = `console-passkey-options:${request.ip}`;
    const retry = retryAfterRepeatedFailures(deps.failures, key, deps.maxFailures * signInAddressShare);
    if (retry !== null) return sendConsoleError(reply, 'RATE_LIMITED', 'Too many passkey sign-ins begun; retry later', { retryAfterSeconds: retry });
    deps.failures.hit(key);
    return reply.header('cache-control', 'no-store').send(await deps.passkeys.signInOptions(rpOf(deps, request)));
  });

  app.post('/console/api/passkey-sign-in', { schema: credentialSchema }, async (request, reply) => {
    const { credential } = request.body as { credential: AuthenticationResponseJSON };
    const key = `console:passkey|${request.ip}`;
    const retry = retryAfterRepeatedFailures(deps.failures, key, deps.maxFailures);
    if (retry !== null) return sendConsoleError(reply, 'RATE_LIMITED', 'Too many failed sign-ins; retry later', { retryAfterSeconds: retry });
    const operatorId = await deps.passkeys.signIn(credential, rpOf(deps, request));
    const operator = operatorId === null ? null : await deps.operators.byId(operatorId);
    if (!operator || operator.disabledAt) {
      deps.failures.hit(key);
      return sendConsoleError(reply, 'UNAUTHORIZED', 'The passkey was not accepted');
    }
    const s = await deps.operators.startSession(operator);
    await audit(`operator:${operator.email}`, 'console.sign-in', 'ok (passkey)');
    return signedIn(reply, s);
  });

  app.get('/console/api/session', { schema: hidden }, async (request, reply) => {
    const { operator, sessionId } = sessionOf(request);
    return reply.header('cache-control', 'no-store').send({ operator: { id: operator.id, email: operator.email }, csrfToken: csrfTokenOf(sessionId) });
  });

  app.post('/console/api/sign-out', { schema: hidden }, async (request, reply) => {
    const { operator, sessionId } = sessionOf(request);
    await deps.operators.signOut(sessionId);
    await audit(`operator:${operator.email}`, 'console.sign-out', 'ok');
    return reply.header('set-cookie', clearedCookie(cookie, deps.secureCookies)).send({ signedOut: true });
  });

  app.post('/console/api/passkeys/options', { schema: hidden }, async (request, reply) =>
    reply.header('cache-control', 'no-store').send(await deps.passkeys.registrationOptions(sessionOf(request).operator, rpOf(deps, request))),
  );

  app.post('/console/api/passkeys', { schema: credentialSchema }, async (request, reply) => {
    const { operator } = sessionOf(request);
    const { credential } = request.body as { credential: RegistrationResponseJSON };
    const outcome = await deps.passkeys.register(operator, credential, rpOf(deps, request));
    const refusal = outcome === 'exists' ? 'the passkey is already registered' : outcome;
    await audit(`operator:${operator.email}`, 'console.add-passkey', outcome === true ? 'ok' : `refused: ${refusal}`);
    if (outcome === 'exists') return sendPasskeyExists(reply);
    if (outcome !== true) return sendConsoleError(reply, 'VALIDATION_ERROR', outcome, { details: [{ field: 'credential', issue: outcome }] });
    return reply.send({ added: true });
  });
}
