import type { AfterCommit } from './after-commit.js';
import { eventFor, webhookPayload, type OutboxEvent } from './events.js';
import type { Random } from './ports.js';
import type { Verification } from './verification.js';

/** The outbox event a verification's new state emits (none for PENDING), claimed for this process when it delivers. */
export function eventsFor(v: Verification, now: Date, random: Random, afterCommit: AfterCommit): OutboxEvent[] {
  const kind = eventFor(v.status);
  if (!kind) return [];
  return [
    {
      id: random.uuid(),
      clientId: v.clientId,
      verificationId: v.id,
      kind,
      payload: webhookPayload(kind, v),
      webhookUrl: v.webhookUrl,
      createdAt: v.updatedAt,
      claimedUntil: v.webhookUrl ? afterCommit.claimUntil('event', now) : null,
      lastSend: { provider: v.delivery.provider, messageId: v.delivery.messageId },
    },
  ];
}
