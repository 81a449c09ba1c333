/**
 * Skips a provider that keeps failing, for a while, when another is configured (contract 8): after
 * `threshold` transient failures in a row it is open for `openMs`; then one send may try it again (half open),
 * and a success closes it. In this process only: each instance learns for itself, which needs no coordination.
 */
export class CircuitBreaker {
  private readonly state = new Map<string, { failures: number; openUntil: number }>();

  constructor(
    private readonly now: () => number,
    private readonly threshold = 5,
    private readonly openMs = 30_000,
  ) {}

  /** True while the provider should be skipped. */
  isOpen(provider: string): boolean {
    const s = this.state.get(provider);
    return s !== undefined && s.openUntil > this.now();
  }

  /** Until when the provider is skipped (ms since the epoch), or null while it is closed (the console's providers page). */
  openUntil(provider: string): number | null {
    const s = this.state.get(provider);
    return s !== undefined && s.openUntil > this.now() ? s.openUntil : null;
  }

  /** Transient failures in a row counted against the provider now. */
  failuresInARow(provider: string): number {
    return this.state.get(provider)?.failures ?? 0;
  }

  record(provider: string, failed: boolean): void {
    if (!failed) {
      this.state.delete(provider);
      return;
    }
    const s = this.state.get(provider) ?? { failures: 0, openUntil: 0 };
    s.failures += 1;
    if (s.failures >= this.threshold) {
      s.openUntil = this.now() + this.openMs;
      // Half open when it runs out: the next failure opens it again at once.
      s.failures = this.threshold - 1;
    }
    this.state.set(provider, s);
  }
}
