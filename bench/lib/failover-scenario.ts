import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findAutoFailover, startFailoverCluster } from '../../scripts/auto-failover.js';
import { failPrimaryUnderLoad } from '../../scripts/failover-drill.js';

export interface FailoverSettings {
  /** Failovers measured (the issue: 5). */
  readonly runs: number;
  /** Create loops running against the service while the primary dies. */
  readonly connections: number;
  readonly databaseTimeoutMs: number;
}

export interface FailoverRun {
  /** From the SIGKILL of the primary (its keeper and postmaster) to the end of the first create answered 200 after it. */
  readonly recoveredAfterMs: number | null;
  /** Creates answered 200 in the run, and how many of those could not be read afterwards. */
  readonly accepted: number;
  readonly lost: number;
  /** Answers by HTTP status (0: no answer within the request bound). */
  readonly statuses: Record<string, number>;
  /** Verifications whose code reached the gateway under more than one send id. */
  readonly sentTwice: number;
}

export interface FailoverResults {
  readonly settings: FailoverSettings;
  readonly runs: FailoverRun[];
  /** Why the section did not run (pg_autoctl missing). */
  skipped: string | null;
}

export function emptyFailoverResults(settings: FailoverSettings): FailoverResults {
  return { settings, runs: [], skipped: null };
}

interface ServiceHandle {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  stop(): Promise<void>;
}

/**
 * The failover section: a pg_auto_failover formation (scripts/auto-failover.ts), the service on its multi-host
 * URL with the `http` provider to a local gateway, and `runs` times: SIGKILL of the primary under `connections`
 * create loops, time to the first create answered 200 again, creates answered 200 that cannot be read after, and
 * codes sent under two send ids; then the killed node is started again and rejoins as the secondary.
 */
export async function benchFailover(options: {
  readonly settings: FailoverSettings;
  readonly startService: (env: Record<string, string>) => Promise<ServiceHandle>;
  readonly log: (text: string) => void;
  readonly out: FailoverResults;
}): Promise<void> {
  const { settings, log, out } = options;
  if (!findAutoFailover()) {
    out.skipped = 'pg_autoctl is not installed (apt-get install postgresql-15-auto-failover)';
    log(`failover: skipped: ${out.skipped}`);
    return;
  }
  const sends = new Map<string, Set<string>>();
  const gateway = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { id, verificationId } = JSON.parse(body) as { id: string; verificationId: string };
      sends.set(verificationId, (sends.get(verificationId) ?? new Set()).add(id));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${id}` }));
    });
  });
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
  log('failover: starting a pg_auto_failover monitor, primary and secondary');
  const cluster = await startFailoverCluster();
  let service: ServiceHandle | null = null;
  try {
    await cluster.settled();
    service = await options.startService({
      DATABASE_URL: cluster.url,
      DATABASE_TIMEOUT_MS: String(settings.databaseTimeoutMs),
      SMS_PROVIDER: 'http',
      HTTP_GATEWAY_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/send`,
      HTTP_GATEWAY_SECRET: `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
      PUBLIC_BASE_URL: 'https://otp.example.test',
    });
    const tokenAnswer = await fetch(`${service.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: service.clientId, client_secret: service.clientSecret }),
    });
    const token = ((await tokenAnswer.json()) as { accessToken: string }).accessToken;
    for (let i = 0; i < settings.runs; i++) {
      const result = await failPrimaryUnderLoad({
        url: service.url,
        token,
        cluster,
        how: 'kill',
        concurrency: settings.connections,
        warmupMs: 2_000,
        recoveryBoundMs: 60_000,
        afterRecoveryMs: 1_000,
        requestBoundMs: 4 * settings.databaseTimeoutMs,
        firstNumber: 40_000_000 + i * 5_000_000,
      });
      const statuses: Record<string, number> = {};
      for (const a of result.answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      const accepted = result.answers.filter((a) => a.status === 200).map((a) => a.id as string);
      let lost = 0;
      for (const id of accepted) {
        const res = await fetch(`${service.url}/v1/otp/${id}`, { headers: { authorization: `Bearer ${token}` } });
        if (res.status !== 200) lost += 1;
      }
      // The sends of this run's creates, once the ones retried after their lease have gone too.
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && !accepted.every((id) => sends.has(id))) await new Promise((r) => setTimeout(r, 250));
      const sentTwice = accepted.filter((id) => (sends.get(id)?.size ?? 0) > 1).length;
      const run: FailoverRun = { recoveredAfterMs: result.recoveredAfterMs, accepted: accepted.length, lost, statuses, sentTwice };
      out.runs.push(run);
      log(`failover ${i + 1}/${settings.runs}: ${JSON.stringify(run)}`);
      cluster.start(result.failed);
      await cluster.settled();
    }
  } finally {
    await service?.stop();
    await cluster.close();
    await new Promise<void>((r) => gateway.close(() => r()));
  }
}

/** p50 and worst of the runs' times to recover; a run that never recovered counts as infinitely long. */
export function failoverTimes(runs: readonly FailoverRun[]): { p50: number; worst: number } | null {
  if (runs.length === 0) return null;
  const times = runs.map((r) => r.recoveredAfterMs ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
  return { p50: times[Math.floor((times.length - 1) / 2)] as number, worst: times.at(-1) as number };
}
