import type { InboxMessage } from './inbox-message.js';

/**
 * Keeps a reader's place in the stored messages (the inbox page's feed, `otp-service messages --follow`).
 * Ids come from a sequence, and on PostgreSQL two instances' inserts can commit out of id order: a message with
 * a lower id than one already seen can still appear. So each read also looks back over the last `overlapMs`
 * by time, and the ids seen in that window are remembered to show each message once.
 */
export class MessageCursor {
  private lastId = 0;
  /** Ids seen, with when they were stored (ms), kept for the overlap window. */
  private readonly seen = new Map<number, number>();

  constructor(private readonly overlapMs = 10_000) {}

  /** What to ask the source for next: `recent(afterId, since, ...)`. */
  window(now: Date): { afterId: number; since: Date } {
    return { afterId: this.lastId, since: new Date(now.getTime() - this.overlapMs) };
  }

  /** The messages not seen before, in the order given; all of them are remembered as seen. */
  fresh(messages: readonly InboxMessage[], now: Date): InboxMessage[] {
    const horizon = now.getTime() - this.overlapMs;
    for (const [id, at] of this.seen) if (at < horizon) this.seen.delete(id);
    const out: InboxMessage[] = [];
    for (const m of messages) {
      if (this.seen.has(m.id) || (m.id <= this.lastId && Date.parse(m.at) < horizon)) continue;
      out.push(m);
      this.seen.set(m.id, Date.parse(m.at));
      if (m.id > this.lastId) this.lastId = m.id;
    }
    return out;
  }
}
