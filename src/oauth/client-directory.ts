import type { Client, ClientStore } from './client.js';

interface Entry {
  client: Client | null;
  loadedAt: number;
  refreshing: Promise<Client | null> | null;
}

/**
 * Clients by id, cached so that neither token checks nor the token endpoint read the database per request.
 *
 * An entry younger than `freshMs` is used as is; up to `maxAgeMs` it is used while a reload runs in the
 * background; older, the caller waits for the reload. So a client disabled or rotated on another instance
 * is seen here within `maxAgeMs` (60 s by the contract), and at once on the instance that changed it.
 */
export class ClientDirectory {
  private readonly entries = new Map<string, Entry>();
  /**
   * Counts forgets: a read that began before a forget may have read the client as it was before the change, so
   * its result is handed to its caller but not kept.
   */
  private forgets = 0;

  constructor(
    private readonly store: ClientStore,
    private readonly now: () => number,
    private readonly freshMs = 20_000,
    private readonly maxAgeMs = 50_000,
    /** Bound on cached clients, so that lookups of random ids cannot grow memory. */
    private readonly maxEntries = 10_000,
  ) {}

  async get(id: string): Promise<Client | null> {
    const entry = this.entries.get(id);
    const age = entry ? this.now() - entry.loadedAt : Infinity;
    if (entry && age < this.freshMs) return entry.client;
    if (entry && age < this.maxAgeMs) {
      void this.reload(id, entry).catch(() => undefined);
      return entry.client;
    }
    return this.reload(id, entry);
  }

  /** Forgets a client, so the next lookup reads the database. */
  forget(id: string): void {
    this.forgets += 1;
    this.entries.delete(id);
  }

  /** Forgets every client (a change may have been missed, e.g. while a notification connection was down). */
  forgetAll(): void {
    this.forgets += 1;
    this.entries.clear();
  }

  private reload(id: string, existing: Entry | undefined): Promise<Client | null> {
    if (existing?.refreshing) return existing.refreshing;
    const entry: Entry = existing ?? { client: null, loadedAt: -Infinity, refreshing: null };
    const forgetsBefore = this.forgets;
    entry.refreshing = this.store
      .find(id)
      .then((client) => {
        if (this.forgets !== forgetsBefore) return client;
        entry.client = client;
        entry.loadedAt = this.now();
        if (!this.entries.has(id) && this.entries.size >= this.maxEntries) {
          const oldest = this.entries.keys().next();
          if (!oldest.done) this.entries.delete(oldest.value);
        }
        this.entries.set(id, entry);
        return client;
      })
      .finally(() => {
        entry.refreshing = null;
      });
    return entry.refreshing;
  }
}
