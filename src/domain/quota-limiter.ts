/** Shares of a window's quota, kept where every instance sees them (port; SqlCounterStore implements it). */
export interface QuotaStore {
  /** Adds up to `want` to the (key, window) total without passing `limit`; resolves with how many were granted. */
  claim(key: string, windowStart: number, want: number, limit: number): Promise<number>;
}

interface Slot {
  readonly windowStart: number;
  /** The limit the last claim was made under: a larger one may grant more after the window was spent. */
  limit: number;
  /** Admissions this instance has claimed and not used yet. */
  held: number;
  /** The store granted less than asked: the window's quota is spent. */
  spent: boolean;
  claiming: Promise<void> | null;
}

/**
 * Admits at most `limit` hits per key per window across every instance (contract 6). Each instance admits only
 * from shares of the window's quota it has claimed from the store, an atomic increment that never passes the
 * limit, so instances together cannot exceed it; the next share is claimed before the last runs out, so most
 * requests wait for nothing. A share left unused at the window's end is lost: the error is only ever on the
 * side of admitting fewer.
 */
export class QuotaLimiter {
  private readonly slots = new Map<string, Slot>();

  constructor(
    private readonly store: QuotaStore,
    private readonly windowMs: number,
    private readonly now: () => number,
    private readonly limit: number,
    /**
     * Into how many shares the window's quota is cut. Small enough shares that an idle instance strands little
     * of the quota (at most 1.5 shares per instance), large enough that claims stay rare.
     */
    private readonly shares = 20,
  ) {}

  /**
   * True when one more hit of `key` is admitted in this window (and counted). `limit` is the window's own when it
   * moves with what is measured (ABROAD_LIMIT_SHARE); a larger one than the last lets a spent window claim again.
   */
  async tryAcquire(key: string, limit = this.limit): Promise<boolean> {
    const slot = this.slot(key);
    if (limit > slot.limit) {
      slot.limit = limit;
      slot.spent = false;
    }
    const share = Math.max(1, Math.ceil(slot.limit / this.shares));
    while (slot.held === 0 && !slot.spent) await this.claim(key, slot, share);
    if (slot.held === 0) return false;
    slot.held -= 1;
    // A share of one is not claimed ahead: it would sit unused here while another instance is refused, and a
    // quota that small is exact only so.
    if (share > 1 && slot.held < share / 2 && !slot.spent) this.claim(key, slot, share).catch(() => undefined);
    return true;
  }

  /**
   * Gives back a hit `tryAcquire` admitted and that was not used after all (a create refused by another limit):
   * this instance keeps it for its next hit of the key, in the same window.
   */
  release(key: string): void {
    const slot = this.slots.get(key);
    if (slot && slot.windowStart === this.windowStartOf(this.now())) slot.held += 1;
  }

  /** Milliseconds until the current window ends. */
  msToNextWindow(): number {
    const t = this.now();
    return this.windowStartOf(t) + this.windowMs - t;
  }

  private claim(key: string, slot: Slot, share: number): Promise<void> {
    slot.claiming ??= this.store
      .claim(key, slot.windowStart, share, slot.limit)
      .then((granted) => {
        slot.held += granted;
        if (granted < share) slot.spent = true;
      })
      .finally(() => {
        slot.claiming = null;
      });
    return slot.claiming;
  }

  private slot(key: string): Slot {
    const windowStart = this.windowStartOf(this.now());
    let slot = this.slots.get(key);
    if (!slot || slot.windowStart !== windowStart) {
      slot = { windowStart, limit: this.limit, held: 0, spent: false, claiming: null };
      this.slots.set(key, slot);
      // Slots of past windows are of no use: keep the map to the keys seen this window.
      for (const [k, s] of this.slots) if (s.windowStart < windowStart) this.slots.delete(k);
    }
    return slot;
  }

  private windowStartOf(t: number): number {
    return t - (t % this.windowMs);
  }
}
