import type { Services } from '../services.js';
import { idempotencySeconds } from '../services.js';
import { webhookChannel } from '../store/webhook-store.js';
import { NotifyListener } from '../webhooks/notify-listener.js';
import { pruneHistory } from '../store/retention.js';
import { PeriodicTask } from './periodic-task.js';

export interface WorkersOptions {
  /** Deliver webhooks in this process; WEBHOOK_WORKER by default (`otp-service worker` always does). */
  readonly webhooks?: boolean;
}

/** Background work of one process: sending codes, the expiry sweep, webhooks, shared counters, housekeeping. */
export class Workers {
  private readonly tasks: PeriodicTask[] = [];
  private readonly listener: NotifyListener | null = null;
  private readonly deliversWebhooks: boolean;

  constructor(
    private readonly services: Services,
    options: WorkersOptions = {},
  ) {
    const { logger, sendWorker, verifications, verificationStore, clientRate, authFailures, counters, clock, config } =
      services;
    const onError = (name: string, err: unknown) => logger.error({ err, task: name }, 'background task failed');
    const send = new PeriodicTask('send', 500, () => sendWorker.runOnce(), onError);
    services.wake.send = () => send.wake();
    this.tasks.push(
      send,
      // Expired verifications are recorded, with their events, within a second of their time.
      new PeriodicTask('expiry-sweep', 1_000, async () => (await verifications.expireDue(500)) === 500, onError),
      new PeriodicTask(
        'counters',
        100,
        async () => {
          await Promise.all([clientRate.flush(), authFailures.flush()]);
          return false;
        },
        onError,
      ),
      new PeriodicTask(
        'housekeeping',
        60_000,
        async () => {
          const now = clock.now().getTime();
          await counters.prune(new Date(now - 10 * 60_000));
          await verificationStore.pruneIdempotencyKeys(new Date(now - idempotencySeconds * 1000));
          if (config.RETENTION_DAYS > 0) {
            // A full round means more is due: run again at once rather than in a minute.
            return (await pruneHistory(services.db.db, new Date(now - config.RETENTION_DAYS * 86_400_000))) >= 5_000;
          }
          return false;
        },
        onError,
      ),
    );
    this.deliversWebhooks = options.webhooks ?? config.WEBHOOK_WORKER;
    if (this.deliversWebhooks) {
      // Woken by this process's commits, by NOTIFY from other processes, and by a delivery freeing a slot;
      // the poll only catches retries falling due and anything a lost notification missed.
      const webhooks = new PeriodicTask(
        'webhooks',
        config.WEBHOOK_POLL_INTERVAL_MS,
        () => services.webhookWorker.runOnce(),
        onError,
      );
      services.wake.webhooks = () => webhooks.wake();
      this.tasks.push(webhooks);
      if (services.db.pool) {
        this.listener = new NotifyListener(
          services.db.pool,
          webhookChannel,
          () => webhooks.wake(),
          logger.child({ component: 'webhooks' }),
        );
      }
    } else if (services.db.kind === 'pglite') {
      logger.warn('WEBHOOK_WORKER=false on the embedded database: no process delivers webhooks');
    }
  }

  start(): void {
    for (const task of this.tasks) task.start();
    this.listener?.start();
  }

  /** Stops every task, lets webhook deliveries in flight end (within WEBHOOK_TIMEOUT_MS), closes the listener. */
  async stop(): Promise<void> {
    await this.listener?.stop();
    await this.services.sendWorker.drain();
    await Promise.all(this.tasks.map((t) => t.stop()));
    if (this.deliversWebhooks) await this.services.webhookWorker.close();
  }
}
