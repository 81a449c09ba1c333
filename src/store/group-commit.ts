/**
 * Group commit: writes handed in while a flush is in flight wait and go together in the next one, so
 * under load many writes share one commit (one fsync), and when idle a write goes at once, alone.
 */
export class GroupCommit<T> {
  private queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly flush: (items: readonly T[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves once `item` is committed; rejects if its batch failed. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.flushing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.flush(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.flushing = false;
  }
}
