import type pg from 'pg';
import type { Logger } from 'pino';

/** What to do with a channel's notifications: the payload, or null after each (re)connect (something may have been missed). */
export type ChannelHandlers = Readonly<Record<string, (payload: string | null) => void>>;

/**
 * Holds one connection of the pool in LISTEN on a few channels and calls each channel's handler for its
 * notifications, so that a commit in any process reaches this one at once. One connection for every channel,
 * so that listening never takes more than one from the pool. A lost connection is replaced after `retryMs`;
 * on every (re)connect each handler is called with null, in case something was missed meanwhile.
 */
export class NotifyListener {
  /** The listening connection and how to let go of it. */
  private current: { client: pg.PoolClient; close: () => void } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;

  constructor(
    private readonly pool: pg.Pool,
    /** By channel name: constant identifiers (they are written into the LISTEN statements). */
    private readonly handlers: ChannelHandlers,
    private readonly logger: Logger,
    private readonly retryMs = 1_000,
  ) {
    for (const channel of Object.keys(handlers)) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
    }
  }

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const current = this.current;
    this.current = null;
    current?.close();
  }

  /** True while a connection is listening (tests). */
  get listening(): boolean {
    return this.current !== null;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      this.logger.warn({ err }, 'could not connect to listen for notifications; retrying');
      this.retry();
      return;
    }
    let closed = false;
    // The connection is never handed back to the pool: a LISTEN session is closed, not reused.
    const close = (err?: unknown) => {
      if (closed) return;
      closed = true;
      client.removeListener('notification', onNotification);
      client.release(err instanceof Error ? err : true);
      // Errors of the closing connection have no one left to tell.
      client.on('error', () => undefined);
    };
    const onLost = (err?: unknown) => {
      if (closed) return;
      if (this.current?.client === client) this.current = null;
      close(err ?? new Error('listen connection ended'));
      if (!this.stopped) {
        this.logger.warn({ err }, 'lost the notification connection; reconnecting');
        this.retry();
      }
    };
    const onNotification = (message: pg.Notification) => {
      this.handlers[message.channel]?.(message.payload ?? null);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', onNotification);
    try {
      await client.query(Object.keys(this.handlers).map((channel) => `LISTEN ${channel}`).join('; '));
    } catch (err) {
      onLost(err);
      return;
    }
    if (this.stopped) {
      close();
      return;
    }
    this.current = { client, close: () => close() };
    for (const handle of Object.values(this.handlers)) handle(null);
  }

  private retry(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, this.retryMs);
    this.timer.unref();
  }
}
