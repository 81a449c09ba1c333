import type { AttemptRecord, ClaimedEvent } from '../domain/webhook-delivery.js';
import type { ClientSecrets } from './signer.js';

/** The outbox as the delivery worker uses it (port; SqlWebhookStore implements it). */
export interface WebhookOutbox {
  /**
   * Claims due events for `leaseMs`, skipping rows other workers hold: another worker sees an event again only
   * when its lease runs out, and then records the lost attempt as interrupted.
   */
  claimDue(now: Date, leaseMs: number, limit: number): Promise<ClaimedEvent[]>;
  /**
   * Records an attempt and moves the event on. Returns false when the event was no longer this attempt's
   * (its lease ran out and another worker took it): the attempt is recorded, the event left alone.
   */
  recordAttempt(record: AttemptRecord, now: Date): Promise<boolean>;
}

/** A client's webhook signing secrets (port; the client directory, cached, is the one source). */
export type WebhookSecrets = (clientId: string) => Promise<ClientSecrets | null>;
