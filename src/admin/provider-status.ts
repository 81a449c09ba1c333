import type { Channel } from '../domain/channel-driver.js';

/** What the providers' status reads: the configuration, this process's circuit breaker and metrics, and the database. */
export interface ProviderStatusDeps {
  /** Each channel's providers in failover order (config). */
  readonly configured: () => readonly { readonly channel: Channel; readonly providers: readonly string[] }[];
  readonly circuit: (provider: string) => { readonly openUntil: number | null; readonly failuresInARow: number };
  readonly latency: () => Promise<readonly { channel: string; provider: string; count: number; meanSeconds: number }[]>;
  readonly traffic: (since: Date) => Promise<readonly { channel: string; provider: string; verifications: number; delivered: number }[]>;
  readonly failures: (since: Date) => Promise<readonly { channel: string; provider: string; failures: number; lastError: ProviderError | null }[]>;
}

/** A failed call or undelivered send, as the record's `lastError` says it. */
export interface ProviderError {
  readonly code: string;
  readonly message: string;
  readonly at: string;
}

/** One provider of one channel, as `otp-service providers` and the console show it. */
export interface ProviderStatus {
  readonly channel: Channel;
  readonly provider: string;
  /** Its place in the channel's failover order, 1 first. */
  readonly order: number;
  /** closed (used), open (skipped until `openUntil`, after 5 transient failures in a row), in this process. */
  readonly circuit: 'closed' | 'open';
  readonly openUntil: string | null;
  readonly failuresInARow: number;
  /** Sends it answered since this process started, and their mean answer time. */
  readonly sendsAnswered: number;
  readonly meanSendSeconds: number | null;
  /**
   * Verifications of the last 24 hours whose latest send it carried, and of them those a receipt marked DELIVERED;
   * its calls that failed over those 24 hours (every instance's), and the latest error it gave (or an undelivered
   * receipt).
   */
  readonly lastDay: {
    readonly verifications: number;
    readonly delivered: number;
    readonly deliveryRate: number | null;
    readonly failures: number;
    readonly lastError: ProviderError | null;
  };
}

const dayMs = 86_400_000;

export async function providerStatus(deps: ProviderStatusDeps, now: Date): Promise<ProviderStatus[]> {
  const since = new Date(now.getTime() - dayMs);
  const [latency, traffic, failures] = await Promise.all([deps.latency(), deps.traffic(since), deps.failures(since)]);
  return deps.configured().flatMap(({ channel, providers }) =>
    providers.map((provider, i): ProviderStatus => {
      const circuit = deps.circuit(provider);
      const answered = latency.find((l) => l.provider === provider && l.channel === channel);
      const day = traffic.find((t) => t.provider === provider && t.channel.toLowerCase() === channel);
      const failed = failures.find((f) => f.provider === provider && f.channel === channel);
      const verifications = day?.verifications ?? 0;
      const delivered = day?.delivered ?? 0;
      return {
        channel,
        provider,
        order: i + 1,
        circuit: circuit.openUntil === null ? 'closed' : 'open',
        openUntil: circuit.openUntil === null ? null : new Date(circuit.openUntil).toISOString(),
        failuresInARow: circuit.failuresInARow,
        sendsAnswered: answered?.count ?? 0,
        meanSendSeconds: answered ? answered.meanSeconds : null,
        lastDay: {
          verifications,
          delivered,
          deliveryRate: verifications > 0 ? delivered / verifications : null,
          failures: failed?.failures ?? 0,
          lastError: failed?.lastError ?? null,
        },
      };
    }),
  );
}
