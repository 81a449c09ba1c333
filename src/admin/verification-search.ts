import { allowedRisk } from '../domain/risk.js';
import { parseE164 } from '../domain/phone.js';
import { attemptRecord, latestTurn, type Verification } from '../domain/verification.js';
import type { WebhookEventWithAttempts } from '../domain/webhook-delivery.js';
import { isUuid } from '../store/uuid.js';
import { eventDetailView, type EventDetailView } from '../webhooks/delivery-log.js';
import type { VerificationLife } from './verification-life.js';

/** What a search reads: verifications by id, number or reference, and their webhook events. */
export interface VerificationSearchDeps {
  findById(id: string): Promise<Verification | null>;
  search(by: { readonly phoneNumber: string } | { readonly reference: string }, limit: number): Promise<Verification[]>;
  webhooksOf(verificationId: string): Promise<WebhookEventWithAttempts[]>;
}

/** The most verifications one search shows. */
export const searchLimit = 50;

/** What the query is: an id (a UUID), a number (+ and digits), or else a reference. */
export function searchKind(query: string): { id: string } | { phoneNumber: string } | { reference: string } {
  const q = query.trim();
  if (isUuid(q.toLowerCase())) return { id: q.toLowerCase() };
  const phone = /^\+[\d\s()-]+$/.test(q) ? parseE164(q.replace(/[\s()-]/g, '')) : null;
  if (phone) return { phoneNumber: phone.e164 };
  return { reference: q };
}

/** `verifications find QUERY`: the newest verifications that match, each with its whole life. */
export async function findVerifications(deps: VerificationSearchDeps, query: string, now: Date): Promise<VerificationLife[]> {
  const kind = searchKind(query);
  const found = 'id' in kind ? [await deps.findById(kind.id)].filter((v): v is Verification => v !== null) : await deps.search(kind, searchLimit);
  return Promise.all(found.map(async (v) => lifeOf(v, (await deps.webhooksOf(v.id)).map((e) => eventDetailView(e, now)))));
}

function lifeOf(v: Verification, webhooks: EventDetailView[]): VerificationLife {
  return {
    id: v.id,
    clientId: v.clientId,
    createdAt: v.createdAt.toISOString(),
    updatedAt: v.updatedAt.toISOString(),
    expiresAt: v.expiresAt.toISOString(),
    phoneNumber: v.phoneNumber,
    region: v.regionCode,
    type: v.type,
    status: v.status,
    failureReason: v.failureReason,
    risk: v.risk ?? allowedRisk,
    reference: v.reference,
    webhookUrl: v.webhookUrl,
    testNumber: v.testNumber,
    // The counter counts every code checked; the right one, when it came, was not a wrong one.
    attempts: Math.max(0, v.counter - (v.status === 'SUCCESS' ? 1 : 0)),
    sends: v.sendRequests,
    delivery: {
      channel: v.delivery.channel,
      provider: v.delivery.provider,
      status: v.delivery.status,
      updatedAt: v.delivery.updatedAt.toISOString(),
      ...latestTurn(v),
    },
    deliveries: v.deliveries.map(attemptRecord),
    webhooks,
  };
}
