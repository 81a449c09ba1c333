import { createHash } from 'node:crypto';
/**
 * Counts hits per key in fixed windows, shared by every instance through a store.
 *
 * Deciding on the hot path must not wait for the database, so each instance decides from the total the
 * store last reported plus its own hits not yet sent, and sends its hits in batches every `syncMs`.
 * The count across instances can therefore overshoot by what the other instances admitted within one
 * sync interval; the store is still the single source of the total.
 */
export interface CounterStore {
  /** Adds each delta to its (key, window) total and returns the new totals, in order. */
  add(entries: readonly { key: string; windowStart: number; delta: number }[]): Promise<number[]>;
}

interface Slot {
  windowStart: number;
  /** Total across instances as last reported by the store, this instance's sent hits included. */
  known: number;
  /** Hits this instance admitted or recorded that the store has not yet been told of. */
  pending: number;
}

/** The longest key kept as given, in bytes: a key built from user input (an email typed at sign-in) can be any size. */
export const maxCounterKeyBytes = 256;

/**
 * A key as the store keeps it: as given up to 256 bytes, else its SHA-256, so that no input makes a row its index
 * cannot hold (which failed the whole batch of every key's hits with it).
 */
export function boundedKey(key: string): string {
  return Buffer.byteLength(key) <= maxCounterKeyBytes ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

export class WindowCounter {
  private readonly slots = new Map<string, Slot>();
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly store: CounterStore,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Hits counted for `key` in the current window, as this instance knows them. */
  count(key: string): number {
    const slot = this.slot(key);
    return slot.known + slot.pending;
  }

  /** Counts one hit for `key`. */
  hit(key: string): void {
    this.slot(key).pending += 1;
  }

  /** Milliseconds until the current window ends. */
  msToNextWindow(): number {
    const t = this.now();
    return this.windowStartOf(t) + this.windowMs - t;
  }

  /** Sends pending hits to the store and learns the totals. Safe to call at any time. */
  flush(): Promise<void> {
    this.flushing ??= this.doFlush().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    const current = this.windowStartOf(this.now());
    const batch: { key: string; slot: Slot; sent: number }[] = [];
    for (const [key, slot] of this.slots) {
      if (slot.windowStart < current) this.slots.delete(key);
      else if (slot.pending > 0) batch.push({ key, slot, sent: slot.pending });
    }
    if (batch.length === 0) return;
    const totals = await this.store.add(
      batch.map((b) => ({ key: b.key, windowStart: b.slot.windowStart, delta: b.sent })),
    );
    batch.forEach((b, i) => {
      b.slot.pending -= b.sent;
      b.slot.known = totals[i] ?? b.slot.known + b.sent;
    });
  }

  private slot(rawKey: string): Slot {
    const key = boundedKey(rawKey);
    const windowStart = this.windowStartOf(this.now());
    let slot = this.slots.get(key);
    if (!slot || slot.windowStart !== windowStart) {
      slot = { windowStart, known: 0, pending: 0 };
      this.slots.set(key, slot);
    }
    return slot;
  }

  private windowStartOf(t: number): number {
    return t - (t % this.windowMs);
  }
}
