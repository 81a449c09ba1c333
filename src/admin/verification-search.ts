import { parseE164 } from '../domain/phone.js';
import type { Verification } from '../domain/verification.js';
import type { WebhookEventWithAttempts } from '../domain/webhook-delivery.js';
import { isUuid } from '../store/uuid.js';
import { eventDetailView, type EventDetailView } from '../webhooks/delivery-log.js';

/** What a search reads: verifications by id, number or reference, and their webhook events. */
export interface VerificationSearchDeps {
  findById(id: string): Promise<Verification | null>;
  search(by: { readonly phoneNumber: string } | { readonly reference: string }, limit: number): Promise<Verification[]>;
  webhooksOf(verificationId: string): Promise<WebhookEventWithAttempts[]>;
}

/** The most verifications one search shows. */
export const searchLimit = 50;

/** A verification's whole life as an operator reads it: never its code. */
export interface VerificationLife {
  readonly id: string;
  readonly clientId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly expiresAt: string;
  readonly phoneNumber: string;
  readonly region: string | null;
  readonly type: string;
  readonly status: string;
  readonly failureReason: string | null;
  readonly reference: string | null;
  readonly webhookUrl: string | null;
  readonly testNumber: boolean;
  /** Wrong codes tried. */
  readonly attempts: number;
  /** Sends asked for (create and resends). */
  readonly sends: number;
  readonly delivery: { channel: string; provider: string | null; status: string; updatedAt: string };
  /** Every send attempt, oldest first. */
  readonly deliveries: readonly { channel: string; provider: string; status: string; at: string }[];
  /** Its webhook events with every delivery attempt. */
  readonly webhooks: readonly EventDetailView[];
}

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
    reference: v.reference,
    webhookUrl: v.webhookUrl,
    testNumber: v.testNumber,
    attempts: v.counter,
    sends: v.sendRequests,
    delivery: { channel: v.delivery.channel, provider: v.delivery.provider, status: v.delivery.status, updatedAt: v.delivery.updatedAt.toISOString() },
    deliveries: v.deliveries.map((d) => ({ channel: d.channel, provider: d.provider, status: d.status, at: d.at.toISOString() })),
    webhooks,
  };
}
