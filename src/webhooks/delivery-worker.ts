import type { Logger } from 'pino';
import type { OutboxEvent } from '../domain/events.js';
import type { Clock, Random } from '../domain/ports.js';
import type { AttemptRecord, ClaimedEvent } from '../domain/webhook-delivery.js';
import type { WebhookHttpClient } from './guarded-client.js';
import type { WebhookOutbox, WebhookSecrets } from './outbox.js';
import { parseStoredPayload, serializePayload } from './payload.js';
import { logTaskFailure, PeriodicTask } from '../jobs/periodic-task.js';
import { decideRetry, type AttemptResult } from './retry-policy.js';
import { activeSecrets, signedHeaders, type ClientSecrets } from './signer.js';

/** Told of every delivery attempt's outcome, with the time since its event was committed (metrics). */
export interface WebhookObserver {
  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed', lagSeconds: number): void;
}

export interface DeliveryWorkerDeps {
  readonly outbox: WebhookOutbox;
  readonly http: WebhookHttpClient;
  /** Seconds before each retry (WEBHOOK_RETRY_DELAYS). */
  readonly retryDelays: readonly number[];
  /** How long a claimed event is held (WEBHOOK_LEASE_MS); longer than the HTTP timeout. */
  readonly leaseMs: number;
  /** Deliveries in flight at once (WEBHOOK_CONCURRENCY). */
  readonly concurrency: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** A client's signing secrets, without a database read (cached). */
  readonly secretsOf: WebhookSecrets;
  /** How often it looks for due events when nothing wakes it (WEBHOOK_POLL_INTERVAL_MS). */
  readonly pollIntervalMs: number;
  readonly observer?: WebhookObserver;
}

/** Resolution of the random number the retry jitter is drawn from. */
const randomSteps = 1_000_000;

/**
 * Delivers outbox events to their webhooks. Each run claims as many due events as it has free slots and starts
 * them without waiting, so a slow receiver never holds up the others; every attempt is recorded with its outcome.
 */
export class DeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Claims due events: woken by this process's commits of due events, by NOTIFY from other processes and by a
   * delivery freeing slots; the poll only catches retries falling due and anything a lost notification missed.
   */
  private readonly task: PeriodicTask;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.task = new PeriodicTask('webhooks', deps.pollIntervalMs, () => this.runOnce(), (name, err) =>
      logTaskFailure(deps.logger, name, err),
    );
  }

  start(): void {
    this.task.start();
  }

  /** Events fell due: claim them now rather than at the next poll. */
  wake(): void {
    this.task.wake();
  }

  /** Claims and starts due deliveries; true when every free slot was filled (there may be more). */
  async runOnce(): Promise<boolean> {
    const { deps } = this;
    const room = deps.concurrency - this.inFlight.size;
    if (room <= 0) return false;
    const events = await deps.outbox.claimDue(deps.clock.now(), deps.leaseMs, room);
    if (events.length === 0) return false;
    for (const event of events) this.startWithSecrets(event);
    return events.length === room;
  }

  /**
   * Starts the first attempt of events this process has just committed, written already claimed by it (see
   * AfterCommit): no claim query. These start even when every slot is taken: they arrive no faster than the
   * commits that made them.
   */
  deliverNow(events: readonly OutboxEvent[]): void {
    for (const e of events) {
      if (!e.webhookUrl) continue;
      this.startWithSecrets({
        id: e.id,
        clientId: e.clientId,
        verificationId: e.verificationId,
        payload: e.payload,
        webhookUrl: e.webhookUrl,
        attempt: 1,
        scheduleAttempt: 1,
        createdAt: e.createdAt,
      });
    }
  }

  /** Resolves when no delivery is in flight (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Stops claiming, waits for deliveries in flight (each ends within the HTTP timeout), closes the HTTP client. */
  async close(): Promise<void> {
    await this.task.stop();
    await this.idle();
    await this.deps.http.close();
  }

  /** Deliveries in flight now. */
  get busy(): number {
    return this.inFlight.size;
  }

  /** Starts one attempt: it counts as in flight from here, its secrets' lookup included. */
  private startWithSecrets(event: ClaimedEvent): void {
    const delivery: Promise<void> = this.deps
      .secretsOf(event.clientId)
      .then((secrets) => this.deliver(event, secrets))
      .catch((err: unknown) => {
        // The event keeps its lease and comes back when it runs out, recorded as interrupted.
        this.deps.logger.error({ err, eventId: event.id, attempt: event.attempt }, 'webhook attempt could not be made or recorded');
      })
      .finally(() => {
        this.inFlight.delete(delivery);
        // Claims come in batches: claim again when a quarter of the slots is free (or all are), not for each one.
        const free = this.deps.concurrency - this.inFlight.size;
        if (free >= Math.max(1, Math.floor(this.deps.concurrency / 4)) || this.inFlight.size === 0) this.task.wake();
      });
    this.inFlight.add(delivery);
  }

  private async deliver(event: ClaimedEvent, secrets: ClientSecrets | null): Promise<void> {
    const { deps } = this;
    const attemptedAt = deps.clock.now();
    const payload = parseStoredPayload(event.payload);
    const log = deps.logger.child({
      eventId: event.id,
      verificationId: event.verificationId,
      attempt: event.attempt,
      destination: originOf(event.webhookUrl),
    });
    if (!payload || !secrets) {
      // Nothing can fix these by waiting: give up at once, keeping the event for the operator.
      const error = !payload ? 'the stored event payload is malformed' : 'the client of this event no longer exists';
      await this.record(event, attemptedAt, { durationMs: 0, statusCode: null, error }, { kind: 'failed' });
      log.error({ error }, 'webhook cannot be sent');
      return;
    }
    const body = serializePayload(payload);
    const headers = signedHeaders(activeSecrets(secrets, attemptedAt), event.id, attemptedAt, body);
    const response = await deps.http.post({ url: event.webhookUrl, headers, body });
    const result: AttemptResult =
      response.kind === 'response'
        ? { kind: 'response', status: response.status, retryAfter: response.retryAfter }
        : { kind: 'error' };
    const now = deps.clock.now();
    const decision = decideRetry({
      attempt: event.scheduleAttempt,
      result,
      delays: deps.retryDelays,
      random: deps.random.int(randomSteps) / randomSteps,
      now,
    });
    const next: AttemptRecord['next'] =
      decision.kind === 'retry'
        ? { kind: 'retry', at: new Date(now.getTime() + decision.delayMs) }
        : decision.kind === 'delivered'
          ? { kind: 'delivered' }
          : { kind: 'failed' };
    const outcome = {
      durationMs: response.durationMs,
      statusCode: response.kind === 'response' ? response.status : null,
      error:
        response.kind === 'error'
          ? response.error
          : response.status >= 300 && response.status < 400
            ? 'redirects are not followed'
            : null,
    };
    const current = await this.record(event, attemptedAt, outcome, next);
    if (current) deps.observer?.webhookAttempt(next.kind, Math.max(0, deps.clock.now().getTime() - event.createdAt.getTime()) / 1000);
    const fields = { status: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs };
    if (!current) log.warn(fields, 'webhook attempt ended after its lease ran out; another worker has the event');
    else if (next.kind === 'delivered') log.info(fields, 'webhook delivered');
    else if (next.kind === 'retry') log.warn({ ...fields, retryAt: next.at.toISOString() }, 'webhook attempt failed; will retry');
    else log.warn(fields, 'webhook attempt failed; no retries left, the event is kept as failed');
  }

  private record(
    event: ClaimedEvent,
    attemptedAt: Date,
    outcome: { durationMs: number; statusCode: number | null; error: string | null },
    next: AttemptRecord['next'],
  ): Promise<boolean> {
    return this.deps.outbox.recordAttempt(
      { eventId: event.id, attempt: event.attempt, attemptedAt, webhookUrl: event.webhookUrl, ...outcome, next },
      this.deps.clock.now(),
    );
  }
}

/** The scheme, host and port of a destination: logs never carry its path or query (they may hold secrets). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid URL';
  }
}
