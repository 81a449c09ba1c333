import type { Clock } from '../domain/ports.js';
import type { InboxMessage, InboxSource, InboxState } from './inbox-message.js';
import { MessageCursor } from './message-cursor.js';

/** What the inbox page is told as it happens. */
export type FeedEvent =
  | { readonly kind: 'message'; readonly message: InboxMessage }
  | { readonly kind: 'state'; readonly state: InboxState };

export type FeedListener = (event: FeedEvent) => void;

export interface InboxFeedOptions {
  readonly source: InboxSource;
  readonly clock: Clock;
  /** How often the database is read while a page is open. */
  readonly pollMs: number;
  /** The most messages a page shows, and so the most verifications whose state is followed. */
  readonly limit: number;
  readonly onError: (err: unknown) => void;
}

/**
 * New messages and state changes for the open inbox pages of this process. It reads the database, once per
 * `pollMs` for all pages together and only while one is open, so that it sees what any instance wrote: a
 * message sent by another instance, a verify answered by another instance, an expiry recorded by a sweep. A
 * message stored by this process asks for a read at once (`nudge`), so it shows without waiting for the tick.
 */
export class InboxFeed {
  private readonly listeners = new Set<FeedListener>();
  private cursor: MessageCursor | null = null;
  /** The followed verifications and how each was last shown (status/delivery), oldest first. */
  private readonly shown = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  /** Settles once the first read of the current listeners learnt where things stand. */
  private primed: Promise<void> = Promise.resolve();
  private readAgain = false;

  constructor(private readonly options: InboxFeedOptions) {}

  get subscribers(): number {
    return this.listeners.size;
  }

  /**
   * The newest messages (for a page that just opened), newest first. Read once the feed knows where it stands,
   * so that whatever is stored after this read is sent to the page as new (a message is never lost between the
   * two; one stored meanwhile may come twice, and the page keeps it once).
   */
  async snapshot(): Promise<InboxMessage[]> {
    await this.primed;
    return this.options.source.latest(this.options.limit, null);
  }

  /** Starts telling `listener`; returns how to stop. The first listener starts the reads, the last one stops them. */
  subscribe(listener: FeedListener): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) {
      this.primed = this.prime().catch((err: unknown) => this.options.onError(err));
      void this.primed.then(() => {
        if (this.listeners.size > 0) this.schedule(this.options.pollMs);
      });
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Something was stored in this process: read now rather than at the next tick. */
  nudge(): void {
    if (this.listeners.size > 0 && this.cursor) this.schedule(0);
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // The next first listener starts from what is stored then.
    this.cursor = null;
    this.shown.clear();
  }

  private schedule(delayMs: number): void {
    if (this.reading) {
      this.readAgain = delayMs === 0 || this.readAgain;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.reading = this.read()
        .catch((err: unknown) => this.options.onError(err))
        .finally(() => {
          this.reading = null;
          if (this.listeners.size === 0) return;
          const again = this.readAgain;
          this.readAgain = false;
          this.schedule(again ? 0 : this.options.pollMs);
        });
    }, delayMs);
    // Open pages hold their connections; the timer alone never keeps the process up.
    this.timer.unref();
  }

  /** Learns where things stand: what is stored now is the pages' snapshot, only what comes after is news. */
  private async prime(): Promise<void> {
    const { source, clock, limit } = this.options;
    const cursor = new MessageCursor();
    const oldestFirst = [...(await source.latest(limit, null))].reverse();
    cursor.fresh(oldestFirst, clock.now());
    for (const m of oldestFirst) if (m.state) this.remember(m.state);
    this.cursor = cursor;
  }

  private async read(): Promise<void> {
    const { source, clock } = this.options;
    // The first read failed: try it again (what was stored meanwhile is in the next page's snapshot).
    if (!this.cursor) return this.prime();
    const { afterId, since } = this.cursor.window(clock.now());
    const fresh = this.cursor.fresh(await source.recent(afterId, since, 1000, null), clock.now());
    for (const message of fresh) {
      if (message.state) this.remember(message.state);
      this.emit({ kind: 'message', message });
    }
    const states = await source.states([...this.shown.keys()]);
    for (const state of states) {
      if (this.shown.get(state.verificationId) === key(state)) continue;
      this.shown.set(state.verificationId, key(state));
      this.emit({ kind: 'state', state });
    }
  }

  /** Follows a verification's state from now on, the newest `limit` of them. */
  private remember(state: InboxState): void {
    this.shown.delete(state.verificationId);
    this.shown.set(state.verificationId, key(state));
    while (this.shown.size > this.options.limit) {
      const oldest = this.shown.keys().next();
      if (oldest.done) break;
      this.shown.delete(oldest.value);
    }
  }

  private emit(event: FeedEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

function key(state: InboxState): string {
  return `${state.status}/${state.deliveryStatus}`;
}
