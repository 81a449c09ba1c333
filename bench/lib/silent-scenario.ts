/**
 * The silent section (bench/README.md, "silent"): a silent verification's own overhead, issue 34's "callback to
 * SUCCESS webhook committed, p99 under 50 ms". The service with SILENT_PROVIDER=firebase, its key set
 * (FIREBASE_PNV_JWKS_URL) a local server in this process holding one ES256 key; SILENT creates with a webhookUrl at
 * the bench's webhook receiver (bench/lib/webhook-receiver.ts), paced as the providers section paces its creates;
 * once their silent steps are all taken by the send worker, for each a `POST /v1/otp/{id}/silent` with a valid token
 * for its number (signed beforehand) at the same rate; from that request leaving this process to the receiver having
 * the verification's action.otp.success. The webhook worker is woken by the commit (no poll between), so the
 * delivery is part of the figure and nothing else is waited for.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { onCleanup } from './cleanup.js';
import { PhoneSequence } from './phones.js';
import {
  awaitArrivals,
  countCommits,
  cpuMeter,
  idOf,
  latencyOf,
  paced,
  pacedCreates,
  startService,
  type CpuShares,
  type PacedLatency,
  type ProviderBenchSettings,
} from './provider-scenarios.js';
import { startWebhookReceiver } from './webhook-receiver.js';

export interface SilentResults {
  readonly settings: ProviderBenchSettings;
  /** From each POST /v1/otp/{id}/silent to its action.otp.success at the receiver; the request's own answer beside. */
  latency: PacedLatency | null;
  /** Of the measured verifications, those SUCCESS in the database afterwards. */
  succeeded: number | null;
  /** Deliveries the receiver got in all (warm-up included, duplicates too), and the key set's fetches. */
  deliveries: number | null;
  jwksFetches: number | null;
  notes: string[];
}

export function emptySilentResults(settings: ProviderBenchSettings): SilentResults {
  return { settings, latency: null, succeeded: null, deliveries: null, jwksFetches: null, notes: [] };
}

export interface SilentBenchOptions {
  readonly settings: ProviderBenchSettings;
  /** The service's bench environment on `databaseUrl` (bench/run.ts serviceEnv). */
  readonly serviceEnv: () => NodeJS.ProcessEnv;
  readonly databaseUrl: string;
  readonly log: (text: string) => void;
  readonly out: SilentResults;
}

const projectNumber = '123456789012';
const issuer = `https://fpnv.googleapis.com/projects/${projectNumber}`;

/** Google's key set as the service reads it: one ES256 key, answered at once; its fetches counted. */
async function startKeySet() {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const kid = 'bench-key-1';
  const body = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] });
  let fetches = 0;
  const server = http.createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  onCleanup(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta/jwks`,
    fetches: () => fetches,
    /** A token as Firebase PNV makes one for `e164`, valid for an hour. */
    sign: (e164: string) => {
      const at = Math.floor(Date.now() / 1000);
      return new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience([issuer, 'https://fpnv.googleapis.com/projects/bench-project'])
        .setSubject(e164)
        .setIssuedAt(at)
        .setExpirationTime(at + 3600)
        .sign(privateKey);
    },
    close,
  };
}

export async function benchSilent(o: SilentBenchOptions): Promise<void> {
  const { settings: s, log, out } = o;
  const db = new pg.Pool({ connectionString: o.databaseUrl, max: 2 });
  const keySet = await startKeySet();
  const receiver = await startWebhookReceiver();
  onCleanup(() => receiver.close());
  try {
    const service = await startService({
      ...o.serviceEnv(),
      SILENT_PROVIDER: 'firebase',
      FIREBASE_PROJECT_NUMBER: projectNumber,
      FIREBASE_PNV_JWKS_URL: keySet.url,
      PUBLIC_BASE_URL: 'https://otp.bench.invalid',
    });
    try {
      // The creates (their own warm-up first), not measured here: the figure is the silent path's.
      const { warm, measured } = await pacedCreates(service, s, new PhoneSequence(69_000_000), receiver.url, {}, db, 'SILENT');
      const proofs = async (created: typeof measured) => {
        const ok = created.filter((c) => c.status === 200).map((c) => ({ id: idOf(c.body), e164: c.key }));
        const ids = ok.filter((c): c is { id: string; e164: string } => c.id !== null);
        return Promise.all(ids.map(async (c) => ({ id: c.id, token: await keySet.sign(c.e164) })));
      };
      const warmProofs = await proofs(warm);
      const measuredProofs = await proofs(measured);
      if (measuredProofs.length < measured.length) out.notes.push(`Silent: ${measured.length - measuredProofs.length} of ${measured.length} creates were not answered 200`);
      // The send worker takes each silent step (nothing is sent; the step waits): let it finish, so that its work is
      // not in the figure.
      const deadline = performance.now() + 60_000;
      while (performance.now() < deadline) {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM send_jobs WHERE status = 'pending' AND next_attempt_at < now() + interval '1 minute'`);
        if ((rows[0]?.n ?? 0) === 0) break;
        await sleep(200);
      }
      const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
      const send = (list: readonly { id: string; token: string }[]) =>
        paced(service.url, s.connections, list.length, s.rate, (i) => {
          const p = list[i] ?? { id: '', token: '' };
          return { key: p.id, path: `/v1/otp/${p.id}/silent`, headers, body: JSON.stringify({ token: p.token }) };
        });
      // The warm-up's proofs first, unmeasured (the key set is fetched by the first of them).
      await send(warmProofs);
      const meter = cpuMeter({ service: service.child.pid, bench: process.pid });
      let cpu: CpuShares | null = null;
      const { value: posted, transactions } = await countCommits(db, async () => {
        const sent = await send(measuredProofs);
        cpu = meter();
        return sent;
      });
      const okIds = posted.filter((p) => p.status === 200).map((p) => p.key);
      await awaitArrivals(okIds, (k) => receiver.arrivals.has(k), 3_000, 30_000);
      // The receiver notes performance.now(); the paced requests, the time origin plus it.
      out.latency = latencyOf(s.rate, s.seconds, posted, (p) => {
        const at = receiver.arrivals.get(p.key);
        return at === undefined ? undefined : performance.timeOrigin + at;
      }, cpu, transactions);
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM verifications WHERE id = ANY($1::uuid[]) AND status = 'SUCCESS'`, [
        measuredProofs.map((p) => p.id),
      ]);
      out.succeeded = rows[0]?.n ?? 0;
      out.deliveries = receiver.received();
      out.jwksFetches = keySet.fetches();
      log(`silent: POST /silent→action.otp.success ${JSON.stringify(out.latency)}; ${out.succeeded} SUCCESS; ${out.deliveries} deliveries; key set fetched ${out.jwksFetches} times`);
    } finally {
      await service.child.stop();
    }
  } finally {
    await receiver.close();
    await keySet.close();
    await db.end();
  }
}
