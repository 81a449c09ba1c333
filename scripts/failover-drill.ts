import type { FailoverCluster, FailoverNode } from './auto-failover.js';

/** What one create answered during a drill. */
export interface CreateAnswer {
  /** HTTP status; 0: no answer within the request bound (a hang) or a broken connection. */
  readonly status: number;
  /** The contract's error code of a non-200 answer, when it had one. */
  readonly code: string | null;
  /** The verification's id of a 200. */
  readonly id: string | null;
  readonly startedAt: number;
  readonly endedAt: number;
}

export interface DrillResult {
  readonly answers: readonly CreateAnswer[];
  /** When the primary was failed (the stop or SIGKILL issued), ms since the epoch. */
  readonly failedAt: number;
  /** From the failure to the end of the first create, begun after it, that answered 200; null: none in the bound. */
  readonly recoveredAfterMs: number | null;
  /** /readyz statuses seen while the drill ran, in order, repeats folded. */
  readonly readiness: readonly number[];
  readonly failed: FailoverNode;
}

export interface DrillOptions {
  /** The service's base URL and a bearer token with otp:send. */
  readonly url: string;
  readonly token: string;
  readonly cluster: FailoverCluster;
  readonly how: 'stop' | 'kill';
  /** Creates in flight at once. */
  readonly concurrency: number;
  /** Creates answered before the failure, so that it lands under load. */
  readonly warmupMs: number;
  /** How long after the failure creates may go on failing before the drill gives up waiting for a 200. */
  readonly recoveryBoundMs: number;
  /** Creates still made once a 200 came back, so that the answers after the failover are seen too. */
  readonly afterRecoveryMs: number;
  /** The longest one request may take before it counts as a hang. */
  readonly requestBoundMs: number;
  /** The first number of a run of distinct numbers (each in its own prefix of a thousand). */
  readonly firstNumber: number;
}

/**
 * Fails the cluster's primary (`pg_autoctl stop`, or SIGKILL of its keeper and postmaster) while `concurrency`
 * loops create verifications against the service, and records every answer: the failover test checks them, the
 * bench times them.
 */
export async function failPrimaryUnderLoad(options: DrillOptions): Promise<DrillResult> {
  const { primary } = await options.cluster.settled();
  const answers: CreateAnswer[] = [];
  const readiness: number[] = [];
  let next = options.firstNumber;
  let failedAt = Number.POSITIVE_INFINITY;
  let recoveredAt: number | null = null;
  let stopAt = Number.POSITIVE_INFINITY;

  const createOnce = async (): Promise<void> => {
    next += 1000;
    const startedAt = Date.now();
    let status = 0;
    let code: string | null = null;
    let id: string | null = null;
    try {
      const res = await fetch(`${options.url}/v1/otp/request`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
        body: JSON.stringify({ countryCode: '+234', phoneNumber: `080${String(next).padStart(8, '0')}` }),
        signal: AbortSignal.timeout(options.requestBoundMs),
      });
      status = res.status;
      const body = (await res.json()) as { data?: { id?: string }; error?: { code?: string } };
      id = body.data?.id ?? null;
      code = body.error?.code ?? null;
    } catch {
      status = 0;
    }
    const endedAt = Date.now();
    answers.push({ status, code, id, startedAt, endedAt });
    if (status === 200 && startedAt > failedAt && recoveredAt === null) {
      recoveredAt = endedAt;
      stopAt = Math.min(stopAt, endedAt + options.afterRecoveryMs);
    }
  };
  const loop = async () => {
    while (Date.now() < stopAt) await createOnce();
  };
  const watchReadiness = async () => {
    while (Date.now() < stopAt) {
      let status = 0;
      try {
        status = (await fetch(`${options.url}/readyz`, { signal: AbortSignal.timeout(options.requestBoundMs) })).status;
      } catch {
        status = 0;
      }
      if (readiness.at(-1) !== status) readiness.push(status);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const loops = [...Array.from({ length: options.concurrency }, loop), watchReadiness()];
  await new Promise((r) => setTimeout(r, options.warmupMs));
  failedAt = Date.now();
  stopAt = failedAt + options.recoveryBoundMs;
  if (options.how === 'stop') await options.cluster.stop(primary);
  else await options.cluster.kill(primary);
  await Promise.all(loops);
  return {
    answers,
    failedAt,
    recoveredAfterMs: recoveredAt === null ? null : (recoveredAt as number) - failedAt,
    readiness,
    failed: primary,
  };
}
