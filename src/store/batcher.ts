import { UnavailableError } from '../domain/unavailable.js';
import { retryingConflicts } from './conflicts.js';

/**
 * Batches concurrent work: items handed in while a flush is in flight wait and go together in the next
 * one, so under load many writes share one statement and one commit (group commit) and many point reads
 * one query, and when idle an item goes at once, alone (no added latency). `flush` returns one result per
 * item, in order. When the database did not answer a flush (UnavailableError), the items queued behind it
 * fail with it too rather than wait out the time-out once more. A flush the database ended in a deadlock is
 * made again (each is one statement, so nothing of it committed).
 */
export class Batcher<T, R = void> {
  private queue: { item: T; resolve: (result: R) => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly flush: (items: readonly T[]) => Promise<readonly R[]>,
    private readonly maxBatch = 500,
  ) {}

  /** Resolves with the item's result once it is committed; rejects if its batch failed. */
  add(item: T): Promise<R> {
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
        const items = batch.map((b) => b.item);
        const results = await retryingConflicts(() => this.flush(items));
        batch.forEach((b, i) => {
          const result = results[i];
          if (i < results.length) b.resolve(result as R);
          else b.reject(new Error('group commit returned fewer results than items'));
        });
      } catch (err) {
        for (const b of err instanceof UnavailableError ? [...batch, ...this.queue.splice(0)] : batch) b.reject(err);
      }
    }
    this.flushing = false;
  }
}
