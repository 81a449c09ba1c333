import type pg from 'pg';
import type { Logger } from 'pino';
import type { CommitDispatcher } from './after-commit.js';
import { logTaskFailure, PeriodicTask } from './periodic-task.js';
import type { SendWorker } from './send-worker.js';
import type { DeliveryWorker } from '../webhooks/delivery-worker.js';
import { NotifyListener } from '../webhooks/notify-listener.js';

/** What the background work of one process uses. */
export interface WorkerDeps {
  readonly logger: Logger;
  readonly dispatcher: CommitDispatcher;
  /** The configured providers, started before the first send and stopped after the last. */
  readonly providers: { start(): Promise<void>; stop(): Promise<void> };
  readonly sendWorker: SendWorker;
  /** Null when this process delivers no webhooks (WEBHOOK_WORKER=false). */
  readonly webhookWorker: DeliveryWorker | null;
  /** The expiry sweep (VerificationService.expireDue): how many it moved. */
  readonly expireDue: (limit: number) => Promise<number>;
  /** Time-driven workflow steps (DeliveryService.takeDueSteps): how many it looked at. */
  readonly takeDueSteps: (limit: number) => Promise<number>;
  /** Delivery-confirmed failovers (DeliveryService.takeDueFailovers): how many it looked at. */
  readonly takeDueFailovers: (limit: number) => Promise<number>;
  /** Pushes the shared rate counters to the database. */
  readonly flushCounters: () => Promise<void>;
  /** Reads conversion by country and provider, throttles what is under MIN_CONVERSION, reads the throttles. */
  readonly watchConversion: () => Promise<void>;
  /** Reads the last hour's figures of best routes' providers (`--policy best`), which their shares follow. */
  readonly readRouteFigures?: () => Promise<void>;
  /** Applies kept receipts whose send is known by now (DeliveryService.applyParkedReceipts); true when more may be due. */
  readonly applyParkedReceipts: () => Promise<boolean>;
  /** Prunes what is past keeping; true when a full round was pruned (more is due). */
  readonly housekeeping: () => Promise<boolean>;
  /** PostgreSQL: the pool and channel to LISTEN on, so commits in other processes wake the delivery worker. */
  readonly notifications: { readonly pool: pg.Pool; readonly channel: string } | null;
  /**
   * PostgreSQL: the channel client changes are announced on, and what to forget when one comes (null: the
   * listening connection was (re)made, so anything may have been missed).
   */
  readonly clientChanges: { readonly channel: string; readonly forget: (clientId: string | null) => void } | null;
  /**
   * What every instance holds in memory and reads again when a change is announced on `channel` (PostgreSQL), and
   * every `followedRefreshMs` in case an announcement was lost: the block and allow lists, the routes.
   */
  readonly followed: readonly { readonly name: string; readonly channel: string; readonly refresh: () => Promise<void> }[];
  /**
   * The embedded database: its VACUUM and ANALYZE, every `embeddedVacuumMs`. PGlite runs PostgreSQL in
   * single-user mode, where autovacuum never runs: without this, dead rows would never be reclaimed and the
   * planner would never learn how big the tables grew (with 150,000 verifications, creates ran at a fifth).
   */
  readonly embeddedVacuum?: (() => Promise<void>) | null;
}

/** How often each process looks for workflow steps that fell due, and how many it takes per round. */
export const fallbackStepPollMs = 200;
const fallbackStepBatch = 500;
/** How often each process reads the lists and routes again when no change was announced (a lost NOTIFY, a listener down). */
export const followedRefreshMs = 30_000;

/** How often the embedded database is vacuumed and analysed (a few hundred ms for 150,000 verifications). */
export const embeddedVacuumMs = 5 * 60_000;

/** How often each process reads best routes' figures. */
export const routeFiguresRefreshMs = 30_000;

/** How often each process reads conversion and the throttles in force. */
export const conversionRefreshMs = 10_000;

/** Background work of one process: sending codes, the expiry sweep, webhooks, shared counters, housekeeping. */
export class Workers {
  private readonly tasks: PeriodicTask[];
  private readonly listener: NotifyListener | null;

  constructor(private readonly deps: WorkerDeps) {
    const onError = (name: string, err: unknown) => logTaskFailure(deps.logger, name, err);
    this.tasks = [
      // Expired verifications are recorded, with their events, within a second of their time.
      new PeriodicTask('expiry-sweep', 1_000, async () => (await deps.expireDue(500)) === 500, onError),
      // A workflow's step goes out within a fraction of a second of its time (contract 13), on whichever instance
      // locks it first; a full batch runs the next at once.
      new PeriodicTask('fallback-steps', fallbackStepPollMs, async () => (await deps.takeDueSteps(fallbackStepBatch)) === fallbackStepBatch, onError),
      // So does a delivery-confirmed failover (contract 17), at the same pace.
      new PeriodicTask('delivery-failovers', fallbackStepPollMs, async () => (await deps.takeDueFailovers(fallbackStepBatch)) === fallbackStepBatch, onError),
      new PeriodicTask('counters', 100, async () => (await deps.flushCounters(), false), onError),
      new PeriodicTask('housekeeping', 60_000, () => deps.housekeeping(), onError),
      // A receipt kept while its send's acceptance was being committed elsewhere applies within a second of it.
      new PeriodicTask('parked-receipts', 1_000, () => deps.applyParkedReceipts(), onError),
      // A create asks what this read last: a throttle started by any instance applies here within this period.
      new PeriodicTask('conversion', conversionRefreshMs, async () => (await deps.watchConversion(), false), onError),
    ];
    const { readRouteFigures } = deps;
    // A best route's shares follow its providers' results within this period (nothing is read without one).
    if (readRouteFigures) this.tasks.push(new PeriodicTask('route-figures', routeFiguresRefreshMs, async () => (await readRouteFigures(), false), onError));
    const { webhookWorker, notifications, clientChanges, followed, embeddedVacuum } = deps;
    // First after one interval, not at start: a VACUUM of the whole embedded database holds its one session, and
    // the first requests after a start (or a restore) would wait behind it.
    if (embeddedVacuum) this.tasks.push(new PeriodicTask('embedded-vacuum', embeddedVacuumMs, async () => (await embeddedVacuum(), false), onError, embeddedVacuumMs));
    for (const f of followed) this.tasks.push(new PeriodicTask(f.name, followedRefreshMs, async () => (await f.refresh(), false), onError));
    // One LISTEN connection for every channel: what other processes commit reaches this one at once.
    const handlers: Record<string, (payload: string | null) => void> = {};
    if (webhookWorker && notifications) handlers[notifications.channel] = () => webhookWorker.wake();
    if (clientChanges) handlers[clientChanges.channel] = (id) => clientChanges.forget(id);
    for (const f of followed) {
      const log = deps.logger.child({ component: f.name });
      handlers[f.channel] = () => void f.refresh().catch((err: unknown) => log.warn({ err }, `could not read the ${f.name} again; the next periodic read will`));
    }
    this.listener =
      notifications && Object.keys(handlers).length > 0
        ? new NotifyListener(notifications.pool, handlers, deps.logger.child({ component: 'notifications' }))
        : null;
  }

  /** Starts the providers, then the workers, and from then on takes what this process commits. */
  async start(): Promise<void> {
    const { deps } = this;
    await deps.providers.start();
    deps.sendWorker.start();
    deps.webhookWorker?.start();
    deps.dispatcher.connect({ sends: deps.sendWorker, events: deps.webhookWorker });
    for (const task of this.tasks) task.start();
    this.listener?.start();
  }

  /** Stops every task, lets sends and webhook deliveries in flight end, stops the providers. */
  async stop(): Promise<void> {
    const { deps } = this;
    deps.dispatcher.disconnect();
    await this.listener?.stop();
    await Promise.all(this.tasks.map((t) => t.stop()));
    await deps.sendWorker.stop();
    await deps.webhookWorker?.close();
    await deps.providers.stop();
  }
}
