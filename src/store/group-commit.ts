import { UnavailableError } from '../domain/unavailable.js';
import { isConflict, retryingConflicts } from './conflicts.js';

/**
 * Runs units of work in groups: units handed in while a group is being committed wait and go together in the
 * next one, so under load many share one transaction, and when idle a unit goes at once, alone. Two units with
 * a key in common never share a group (the later waits for the next). When a group fails, each of its units is
 * run again alone, so that one unit's failure (or a deadlock) fails only itself; but not when the database did
 * not answer (UnavailableError): then the group and the units that queued behind it meanwhile fail with it,
 * rather than wait out the time-out once more (a request answers 503 within DATABASE_TIMEOUT_MS, not twice it).
 * A unit the database ended in a deadlock is run again (its transaction rolled back), a few times, then fails as
 * unavailable.
 */
export class GroupCommit<U, R> {
  private queue: { unit: U; keys: readonly string[]; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  private running = false;

  constructor(
    /** Runs a group in one transaction; one result per unit, in order, or throws and nothing commits. */
    private readonly commit: (units: readonly U[]) => Promise<readonly R[]>,
    private readonly maxGroup = 500,
  ) {}

  run(unit: U, keys: readonly string[] = []): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ unit, keys, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const group = this.takeGroup();
      try {
        const results = await this.commit(group.map((g) => g.unit));
        group.forEach((g, i) => (i < results.length ? g.resolve(results[i] as R) : g.reject(new Error('group commit returned fewer results than units'))));
      } catch (err) {
        if (err instanceof UnavailableError) for (const g of [...group, ...this.queue.splice(0)]) g.reject(err);
        else if (group.length === 1 && !isConflict(err)) group[0]?.reject(err);
        else await Promise.all(group.map((g) => retryingConflicts(() => this.commit([g.unit])).then((r) => g.resolve(r[0] as R), g.reject)));
      }
    }
    this.running = false;
  }

  /** The oldest units, up to maxGroup, without two that share a key; the rest keep their place. */
  private takeGroup(): typeof this.queue {
    const taken: typeof this.queue = [];
    const left: typeof this.queue = [];
    const keys = new Set<string>();
    for (const entry of this.queue) {
      if (taken.length < this.maxGroup && !entry.keys.some((k) => keys.has(k))) {
        taken.push(entry);
        for (const k of entry.keys) keys.add(k);
      } else {
        left.push(entry);
      }
    }
    this.queue = left;
    return taken;
  }
}
