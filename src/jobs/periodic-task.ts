import type { Logger } from 'pino';
import { UnavailableError } from '../domain/unavailable.js';

/**
 * How a background task's failed round is logged. A database that did not answer in time is expected on a bad
 * day and says so in one line (the task runs again at its next round, so nothing wedges); anything else is an error.
 */
export function logTaskFailure(logger: Logger, task: string, err: unknown): void {
  if (err instanceof UnavailableError) logger.warn({ task, reason: err.message }, 'background task: database unavailable; trying again');
  else logger.error({ err, task }, 'background task failed');
}

/**
 * Runs `work` every `intervalMs`, or at once when woken; never two runs at a time. When a run reports it
 * did a full batch (`true`), the next starts without waiting, so a backlog drains at full speed.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<boolean>,
    private readonly onError: (name: string, err: unknown) => void,
    /** How long after start the first run comes: at once by default. */
    private readonly firstAfterMs = 0,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.firstAfterMs);
  }

  /** Runs as soon as possible: now if idle, right after the current run otherwise. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /** Stops scheduling and waits for a run in progress to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), delay);
    this.timer.unref();
  }

  private run(): void {
    this.timer = null;
    if (this.stopped || this.running) return;
    this.again = false;
    this.running = this.work()
      .then((more) => more)
      .catch((err: unknown) => {
        this.onError(this.name, err);
        return false;
      })
      .then((more) => {
        this.running = null;
        if (!this.stopped) this.schedule(more || this.again ? 0 : this.intervalMs);
      });
  }
}
