import { routeNotServed } from '../routes/otp.js';
import { canonicalLocale } from '../../domain/client-settings.js';
import { splitNumberInput } from '../../domain/phone.js';
import type { RelayAnswer, RelayRequests } from '../../domain/relay-requests.js';
import type { CreateOutcome, VerificationService } from '../../domain/verification-service.js';

/** A refusal of a relayed send, with the HTTP status /v1 would answer it with (contract 15). */
export interface RelayRefusal {
  readonly status: number;
  readonly message: string;
  readonly retryAfterSeconds?: number;
}

/** An auth server's code: digits or letters, as long as codes go (the client's templates put it in the text). */
const codePattern = /^[0-9A-Za-z]{4,10}$/;

/**
 * Delivers a code an auth server made (contract 15's relays), under the client: one create through the same
 * VerificationService as /v1, with the code given, so that the client's providers, templates, failover, limits
 * (but the per-number ones) and stats apply; the code is never verified here. Null when it was sent.
 */
export async function relaySend(
  verifications: VerificationService,
  request: { readonly clientId: string; readonly scopes: readonly string[]; readonly phone: string; readonly code: string; readonly locale?: string | null },
): Promise<RelayRefusal | null> {
  // A relay sends codes as a create does: only for a client that may send them.
  if (!request.scopes.includes('otp:send')) return { status: 403, message: 'This client may not send codes: it lacks the otp:send scope' };
  if (!codePattern.test(request.code)) return { status: 400, message: 'The code must be 4 to 10 letters or digits' };
  // Auth servers send the number with or without its +.
  const number = splitNumberInput(undefined, request.phone.startsWith('+') ? request.phone : `+${request.phone}`);
  if (number.kind !== 'split') return { status: 400, message: 'The phone number is not a valid E.164 number' };
  const outcome = await verifications.create({
    clientId: request.clientId,
    countryCode: number.countryCode,
    phoneNumber: number.phoneNumber,
    type: 'SEND_SMS',
    webhookUrl: null,
    reference: null,
    locale: request.locale ? canonicalLocale(request.locale) : null,
    idempotency: null,
    // Never a later step: a relayed code is never verified here, so a step's clock would always run out.
    fallback: [],
    relayedCode: request.code,
  });
  return refusalOf(outcome);
}

function refusalOf(outcome: CreateOutcome): RelayRefusal | null {
  switch (outcome.kind) {
    case 'created':
    case 'replayed':
      return null;
    case 'invalid-phone':
      return { status: 400, message: 'The phone number is not valid' };
    case 'channel-not-offered':
      return { status: 400, message: 'This service sends no SMS (SMS_PROVIDER is unset)' };
    case 'route-not-served':
      return { status: 400, message: routeNotServed(outcome) };
    case 'not-allowed':
      return { status: 403, message: `This destination is not allowed: ${outcome.detail}` };
    case 'blocked':
      return { status: 403, message: `This destination is blocked (${outcome.value})` };
    case 'captcha':
      // Relayed codes skip the CAPTCHA (an auth server has no widget); only its outage could reach here.
      return { status: 503, message: 'The service is unavailable; retry later' };
    case 'rate-limited':
      return { status: 429, message: 'Too many sends; retry later', retryAfterSeconds: outcome.retryAfterSeconds };
    case 'idempotency-key-reused':
    case 'invalid-fallback':
      return { status: 500, message: 'Internal error' };
  }
}

/**
 * Relays a signed request once (contract 20): a copy of one already relayed (the same `key`, within its
 * signature's window) is answered as the first was and sends nothing, on whichever instance it arrives; a copy
 * that comes while the first is still being relayed is answered `sent` (the first will send it).
 */
export async function relayOnce(
  requests: RelayRequests,
  request: { readonly clientId: string; readonly key: string; readonly now: Date; readonly sent: RelayAnswer },
  relay: () => Promise<RelayRefusal | null>,
): Promise<RelayAnswer> {
  const claim = await requests.claim(request.clientId, request.key, request.now);
  if (claim.kind === 'seen') return claim.answer ?? request.sent;
  const refused = await relay();
  const answer: RelayAnswer = refused ?? request.sent;
  await requests.answered(request.clientId, request.key, answer);
  return answer;
}
