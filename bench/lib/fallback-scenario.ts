/**
 * The fallback section (issue 19): how late a workflow's time-driven step goes out when many verifications wait
 * for theirs. The service (CALL_PROVIDER=http and SMS_PROVIDER=http, both to a gateway in this process) takes
 * `count` DROPPED_CALL creates with `fallback: ["SEND_SMS"]`, paced at `rate` per second; none is verified, so
 * each one's SMS step falls due FALLBACK_AFTER_SECONDS after its call was accepted, while the others keep waiting
 * (with the defaults: 10,000 creates over 20 s and a 30 s wait, all 10,000 are waiting when the first falls due).
 * A step's lateness is when its SMS reached the gateway less (when its call reached the gateway + the wait): the
 * call's clock starts a little after that, when its acceptance commits, so the figure errs on the late side.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { PhoneSequence } from './phones.js';
import { awaitArrivals, paced, startService } from './provider-scenarios.js';
import { onCleanup } from './cleanup.js';

export interface FallbackBenchSettings {
  /** Verifications created, each waiting for its step. */
  readonly count: number;
  /** Creates per second. */
  readonly rate: number;
  /** FALLBACK_AFTER_SECONDS. */
  readonly afterSeconds: number;
  readonly connections: number;
}

export interface FallbackResults {
  readonly settings: FallbackBenchSettings;
  created: number;
  /** Verifications whose call and step both reached the gateway. */
  matched: number;
  /** The most verifications waiting for their step at once (created, call sent, step not yet out). */
  maxWaiting: number;
  /** Lateness of the step after its time, in ms. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Steps sent more than once (must be 0). */
  duplicates: number;
}

export function emptyFallbackResults(settings: FallbackBenchSettings): FallbackResults {
  return { settings, created: 0, matched: 0, maxWaiting: 0, p50: 0, p90: 0, p99: 0, max: 0, duplicates: 0 };
}

const now = () => performance.timeOrigin + performance.now();

/** A gateway noting, per verification and channel, when each request arrived. */
export async function startGateway(): Promise<{ url: string; arrivals: Map<string, number[]>; close(): Promise<void> }> {
  const arrivals = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      let key = '';
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { channel?: unknown; verificationId?: unknown };
        key = `${String(body.channel)} ${String(body.verificationId)}`;
      } catch {
        // answered all the same
      }
      arrivals.set(key, [...(arrivals.get(key) ?? []), at]);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: `gw-${key.replace(' ', '-')}-${at}` }));
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/gateway`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Fills `out` with the lateness figures (ms) of what was matched. */
export function recordLateness(out: FallbackResults, late: number[]): void {
  late.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 10) / 10;
  out.matched = late.length;
  out.p50 = round(percentile(late, 50));
  out.p90 = round(percentile(late, 90));
  out.p99 = round(percentile(late, 99));
  out.max = round(late[late.length - 1] ?? 0);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** A gateway in this process, and the service sending through it (`providers`), its codes living longer than the run. */
export async function serviceBehindGateway(env: NodeJS.ProcessEnv, s: FallbackBenchSettings, providers: NodeJS.ProcessEnv) {
  const gateway = await startGateway();
  onCleanup(() => gateway.close());
  const service = await startService({
    ...env,
    ...providers,
    HTTP_GATEWAY_URL: gateway.url,
    HTTP_GATEWAY_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    PUBLIC_BASE_URL: 'https://otp.bench.invalid',
    // Longer than the run: every step or failover is due before its verification expires.
    OTP_TTL_SECONDS: String(s.afterSeconds + Math.ceil(s.count / s.rate) + 600),
  });
  return { gateway, service };
}

/** The ids of the creates answered 200. */
export function createdIds(sent: readonly { readonly status: number; readonly body: string }[]): string[] {
  return sent.flatMap((x) => {
    if (x.status !== 200) return [];
    const id: unknown = (JSON.parse(x.body) as { data?: { id?: unknown } }).data?.id;
    return typeof id === 'string' ? [id] : [];
  });
}

export async function benchFallback(o: {
  readonly settings: FallbackBenchSettings;
  readonly serviceEnv: () => NodeJS.ProcessEnv;
  readonly log: (text: string) => void;
  readonly out: FallbackResults;
}): Promise<void> {
  const { settings: s, log, out } = o;
  const { gateway, service } = await serviceBehindGateway(o.serviceEnv(), s, { CALL_PROVIDER: 'http', SMS_PROVIDER: 'http', FALLBACK_AFTER_SECONDS: String(s.afterSeconds) });
  const phones = new PhoneSequence(80_000_000);
  const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
  const sent = await paced(service.url, s.connections, s.count, s.rate, () => ({
    key: '',
    path: '/v1/otp/request',
    headers,
    body: JSON.stringify({ countryCode: '+234', phoneNumber: phones.take(), type: 'DROPPED_CALL', fallback: ['SEND_SMS'] }),
  }));
  const ids = createdIds(sent);
  out.created = ids.length;
  log(`fallback: ${ids.length} of ${sent.length} created; waiting for their steps`);
  // Sample how many wait at once while the steps come due.
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const waiting = ids.filter((id) => gateway.arrivals.has(`call ${id}`) && !gateway.arrivals.has(`sms ${id}`)).length;
      out.maxWaiting = Math.max(out.maxWaiting, waiting);
      await sleep(250);
    }
  })();
  // No step is due before the first call's time is up; from then on they come as the calls did.
  const firstCall = Math.min(...ids.map((id) => gateway.arrivals.get(`call ${id}`)?.[0] ?? Number.POSITIVE_INFINITY));
  if (Number.isFinite(firstCall)) await sleep(Math.max(0, firstCall + s.afterSeconds * 1000 - now()));
  await awaitArrivals(ids, (id) => gateway.arrivals.has(`sms ${id}`), 5_000, (Math.ceil(s.count / s.rate) + 60) * 1000);
  // A second copy would come within a few rounds of the step task.
  await sleep(2_000);
  sampling = false;
  await sampler;
  const late: number[] = [];
  for (const id of ids) {
    const call = gateway.arrivals.get(`call ${id}`)?.[0];
    const sms = gateway.arrivals.get(`sms ${id}`) ?? [];
    if (sms.length > 1) out.duplicates++;
    const first = sms[0];
    if (call === undefined || first === undefined) continue;
    late.push(Math.max(0, first - (call + s.afterSeconds * 1000)));
  }
  recordLateness(out, late);
  log(`fallback: ${JSON.stringify(out)}`);
  await service.child.stop();
  await gateway.close();
}
