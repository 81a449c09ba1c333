/**
 * The SMPP window: at most `size` requests wait for their response at once. Waiters queue in order; one whose
 * signal aborts leaves the queue.
 */
export class Window {
  private used = 0;
  private readonly waiters: Array<{ grant: () => void }> = [];

  constructor(private readonly size: number) {}

  /** Resolves true with a slot taken, or false once `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.used < this.size && this.waiters.length === 0) {
      this.used++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.used++;
          resolve(true);
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Gives a slot back; the first waiter takes it. */
  release(): void {
    this.used--;
    const next = this.waiters.shift();
    if (next) next.grant();
  }
}
