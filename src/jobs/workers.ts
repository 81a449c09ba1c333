import type { Services } from '../services.js';
import { idempotencySeconds } from '../services.js';
import { PeriodicTask } from './periodic-task.js';

/** Background work of one process: sending codes, the expiry sweep, shared counters, housekeeping. */
export class Workers {
  private readonly tasks: PeriodicTask[] = [];

  constructor(private readonly services: Services) {
    const { logger, sendWorker, verifications, verificationStore, clientRate, authFailures, counters, clock } =
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
          return false;
        },
        onError,
      ),
    );
  }

  /** Adds a task (the webhook delivery worker registers itself this way). */
  add(task: PeriodicTask): void {
    this.tasks.push(task);
  }

  start(): void {
    for (const task of this.tasks) task.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.tasks.map((t) => t.stop()));
  }
}
