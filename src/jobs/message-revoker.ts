import type { Provider } from '../channels/provider-port.js';
import type { OutboxEvent } from '../domain/events.js';

export interface MessageRevokerDeps {
  /** The configured provider of that name. */
  readonly provider: (name: string) => Provider | undefined;
  /** How long one revocation may take (PROVIDER_TIMEOUT_MS). */
  readonly timeoutMs: number;
  readonly logger: { warn(obj: object, msg: string): void };
}

/**
 * After a commit, withdraws the message of a verification that no longer needs its code (contract 19: a verified
 * or cancelled verification revokes its Telegram message). Started, never awaited by the request that ended it:
 * the verify answer does not wait on a provider, and a failure is logged only (the message expires anyway).
 */
export class MessageRevoker {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: MessageRevokerDeps) {}

  /** Looks at what a commit emitted and starts a revocation for each ended verification whose provider has one. */
  ended(events: readonly OutboxEvent[]): void {
    for (const event of events) {
      const ended = event.kind === 'action.otp.success' || (event.kind === 'action.otp.failed' && event.payload.data.failureReason === 'CANCELED');
      const { provider: name, messageId } = event.lastSend ?? { provider: null, messageId: null };
      if (!ended || name === null || messageId === null) continue;
      const provider = this.deps.provider(name);
      if (!provider?.revoke) continue;
      const done = provider
        .revoke(messageId, AbortSignal.timeout(this.deps.timeoutMs))
        .catch((err: unknown) => this.deps.logger.warn({ err, provider: name, verificationId: event.verificationId }, 'could not revoke the message'))
        .finally(() => this.inFlight.delete(done));
      this.inFlight.add(done);
    }
  }

  /** Resolves once every revocation started so far has ended (tests; a stopping process). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
