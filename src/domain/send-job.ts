import type { Channel } from './channel-driver.js';

export type SendJobStatus = 'pending' | 'sent' | 'failed';

/** The durable job that sends one verification's code (one per verification), through its providers in turn. */
export interface SendJob {
  readonly verificationId: string;
  /** The channel that carries it: the verification's own, or SMS once a dropped call fell back to it (contract 8). */
  readonly channel: Channel;
  /** E.164 the code is sent from: the SMS sender, or the caller id whose last digits are the code. */
  readonly sender: string;
  readonly status: SendJobStatus;
  /** Attempts so far, over every provider, the one under way included. */
  readonly attempts: number;
  /**
   * The provider of the next (or current) attempt: only a worker that has it configured takes the job (null: a
   * job written before jobs named it, the first of the channel's list).
   */
  readonly provider: string | null;
  /** Transient failures in a row of `provider`. */
  readonly providerFailures: number;
  /** When the next attempt falls due (unless claimed). */
  readonly dueAt: Date;
  /**
   * Held for the process that wrote it until then (it makes the attempt itself, counted in `attempts`); null:
   * due at `dueAt` for any worker.
   */
  readonly claimedUntil: Date | null;
  readonly lastError: string | null;
  readonly createdAt: Date;
}

/**
 * The provider calls of `provider`'s current turn at a job's send, the one under way included: its transient
 * failures in a row, and this one.
 */
export function turnAttempts(job: SendJob, provider: string): number {
  return (job.provider === provider ? job.providerFailures : 0) + 1;
}

/**
 * The job due again at once through `provider` (null: the channel's first), with a clean failure count; claimed
 * until `claimedUntil` by the process that writes it, whose attempt is then under way and counted.
 */
export function dueAgain(job: SendJob, provider: string | null, now: Date, claimedUntil: Date | null): SendJob {
  return {
    ...job,
    status: 'pending',
    provider,
    providerFailures: 0,
    dueAt: now,
    claimedUntil,
    attempts: claimedUntil ? job.attempts + 1 : job.attempts,
  };
}

/**
 * Which jobs of a channel a worker takes: those meant for a provider it has configured. A job written before
 * jobs named their provider (null) is taken only by a worker with a real provider of its channel: `log`, which
 * sends nothing, never takes a job that may be meant for a real one.
 */
export interface JobOwnership {
  readonly channel: Channel;
  /** The providers of the channel this worker has, by name. */
  readonly providers: readonly string[];
  /** True: it takes the channel's jobs that name no provider too. */
  readonly unassigned: boolean;
}

/** The jobs of `channel` a worker with these providers (by name, in failover order) takes. */
export function jobOwnership(channel: Channel, providers: readonly string[]): JobOwnership {
  return { channel, providers, unassigned: providers.some((name) => name !== 'log') };
}
