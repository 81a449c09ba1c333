/**
 * The providers section: the SMPP and `http` providers measured against local peers, each beside its
 * baseline in the same run (bench/README.md, "providers").
 *
 * 1. SMPP throughput: submits per second through one bind of our smpp provider (its `send`, SMPP_WINDOW=10)
 *    against the local SMSC (bench/serve-smsc.ts, its own process), then a bare `smpp` package client (one
 *    bind, 10 submit_sm outstanding) against the same SMSC.
 * 2. Create to submit_sm: the service (SMS_PROVIDER=smpp) under POST /v1/otp/request paced at a fixed rate;
 *    for each create, from sending the request to the SMSC having its submit_sm (matched by destination).
 * 3. Create to gateway request: the same with SMS_PROVIDER=http and a gateway in this process; also the TCP
 *    connections the gateway saw.
 * 4. Receipt to webhook: signed UNDELIVERED receipts for the verifications of 3 (each created with a webhookUrl
 *    at a receiver in this process) POSTed to /callbacks/http at the same rate; each makes its verification
 *    FAILED and sends action.otp.failed; from posting the receipt to the receiver having the webhook.
 * 5. Create to Graph API request: WHATSAPP creates, WHATSAPP_PROVIDER=meta, a Graph API receiver in this process.
 * 6. Create to sendVerificationMessage: TELEGRAM creates, TELEGRAM_PROVIDER=telegram, a Gateway receiver in this
 *    process; the provider's checkSendAbility comes first on the send path and is inside the figure.
 * 7. An SMSC answering after the time-out (bench/lib/late-provider.ts).
 *
 * Clocks: this process and the SMSC child both note performance.timeOrigin + performance.now(); the offset
 * between the two is measured over the SMSC's control port (the sample with the shortest round trip) and taken
 * off, so a cross-process latency is good to about half that round trip.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { connect, PDU } from 'smpp';
import { Webhook } from 'standardwebhooks';
import { Pool } from 'undici';
import type { ProviderContext } from '../../src/channels/provider-port.js';
import { smppProvider } from '../../src/providers/smpp.js';
import { parseSmppUrl } from '../../src/providers/smpp/settings.js';
import { startChild, stringFields, type Child } from './child.js';
import { onCleanup } from './cleanup.js';
import { PhoneSequence } from './phones.js';
import { startGraphReceiver } from './graph-receiver.js';
import type { JsonReceiver } from './json-receiver.js';
import { startTelegramReceiver } from './telegram-receiver.js';
import { benchLateProvider, type LateProviderResults } from './late-provider.js';
import { fetchToken } from './service-scenarios.js';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on this machine. */
const now = () => performance.timeOrigin + performance.now();

/**
 * Where the CPU went during a measurement, as shares of one CPU (1 = one core busy all the time): the whole
 * machine (from /proc/stat, all CPUs together), each of our processes (from /proc/<pid>/stat) and all the
 * postgres processes together (this bench's PostgreSQL; other PostgreSQL servers on the machine too). On a
 * shared machine, machine minus ours is what other work took. null where /proc cannot be read.
 */
export interface CpuShares {
  readonly seconds: number;
  readonly machine: number | null;
  readonly processes: Readonly<Record<string, number | null>>;
  readonly loadAverage: number;
}

const clockTicks = 100; // USER_HZ on Linux

export function processTicks(pid: number): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** utime + stime of every process named postgres (the bench's PostgreSQL: its backends come and go). */
function postgresTicks(): number | null {
  try {
    let sum = 0;
    for (const pid of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (!stat.includes('(postgres)')) continue;
        const fields = stat.split(') ')[1]?.split(' ') ?? [];
        sum += Number(fields[11]) + Number(fields[12]);
      } catch {
        // gone meanwhile
      }
    }
    return sum;
  } catch {
    return null;
  }
}

function machineTicks(): { busy: number; total: number } | null {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** Starts counting; the returned function gives the shares since. */
export function cpuMeter(pids: Readonly<Record<string, number>>): () => CpuShares {
  const t0 = performance.now();
  const m0 = machineTicks();
  const p0 = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processTicks(pid)]));
  const pg0 = postgresTicks();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const m1 = machineTicks();
    const cpus = os.cpus().length;
    const share = (ticks: number) => Math.round((ticks / clockTicks / seconds) * 100) / 100;
    const processes: Record<string, number | null> = {};
    for (const [name, pid] of Object.entries(pids)) {
      const a = p0[name];
      const b = processTicks(pid);
      processes[name] = a === null || a === undefined || b === null ? null : share(b - a);
    }
    // Backends that ended during the measurement take their ticks with them: a lower bound.
    const pg1 = postgresTicks();
    processes.postgres = pg0 === null || pg1 === null ? null : share(Math.max(0, pg1 - pg0));
    const machine =
      m0 && m1 && m1.total > m0.total ? Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * cpus * 100) / 100 : null;
    return { seconds: Math.round(seconds * 10) / 10, machine, processes, loadAverage: Math.round((os.loadavg()[0] ?? 0) * 100) / 100 };
  };
}

export interface ProviderBenchSettings {
  /** Creates (and receipts) per second in scenarios 2 to 4. */
  readonly rate: number;
  /** Measured seconds of scenarios 2 to 4. */
  readonly seconds: number;
  /** Paced but unmeasured seconds before each of scenarios 2 to 4. */
  readonly warmUpSeconds: number;
  /** Measured seconds of each side of the SMPP throughput comparison (after 1 s of warm-up). */
  readonly smppSeconds: number;
  /** SMPP_WINDOW of the provider, and the outstanding submit_sm of the bare client. */
  readonly window: number;
  /** HTTP connections of the paced loops. */
  readonly connections: number;
}

export interface SmppSide {
  readonly submitsPerSecond: number;
  readonly accepted: number;
  readonly failed: number;
  readonly seconds: number;
  /** Sends kept in flight by the driver (the provider queues those beyond its window). */
  readonly concurrency: number;
  /** CPU of the measured part; `bench` is the side under test (this process). */
  readonly cpu: CpuShares;
  /** CPU microseconds per accepted submit, in this process and in the SMSC. */
  readonly cpuMicrosPerSubmit: { readonly bench: number | null; readonly smsc: number | null };
}

export interface SmppThroughput {
  readonly window: number;
  readonly provider: SmppSide;
  readonly bare: SmppSide;
  /** submit_sm the SMSC counted over both runs, warm-ups included. */
  readonly smscSubmits: number;
}

/** Latency of one paced scenario: from the request leaving this process to the peer having what it causes. */
export interface PacedLatency {
  readonly rate: number;
  readonly seconds: number;
  /** Requests sent in the measured part. */
  readonly sent: number;
  /** Of those, answered 200. */
  readonly ok: number;
  readonly statuses: Readonly<Record<string, number>>;
  /** Of the ok ones, those whose effect reached the peer within the wait. */
  readonly matched: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  /** The HTTP answer of the request itself (the service has committed): p50/p99 in ms. */
  readonly responseP50: number;
  readonly responseP99: number;
  /** From the HTTP answer reaching this process to the peer having the effect (negative: it was there first). */
  readonly afterResponseP50: number;
  readonly afterResponseP99: number;
  /** CPU over the measured part (service child, this process, SMSC child when there is one, the machine). */
  readonly cpu: CpuShares | null;
  /**
   * Transactions committed in the service's database over the measured part (pg_stat_database.xact_commit; the
   * service commits a group of concurrent transaction scripts as one), and requests per transaction.
   */
  readonly commits: { readonly transactions: number; readonly requestsPerTransaction: number } | null;
}

export interface ProviderResults {
  readonly settings: ProviderBenchSettings;
  /** SMSC clock minus ours (ms), and the round trip of the sample it was taken from. */
  clock: { offsetMs: number; rttMs: number } | null;
  smppThroughput: SmppThroughput | null;
  smppLatency: PacedLatency | null;
  httpLatency: (PacedLatency & { readonly gatewayConnections: number; readonly gatewayRequests: number; readonly poolSize: number }) | null;
  receiptLatency: (PacedLatency & { readonly failedVerifications: number; readonly otherEvents: number }) | null;
  /** WHATSAPP creates through the meta provider to a local Graph API receiver (bench/lib/graph-receiver.ts). */
  metaLatency: PacedLatency | null;
  /**
   * TELEGRAM creates through the telegram provider to a local Gateway receiver (bench/lib/telegram-receiver.ts), up
   * to its sendVerificationMessage: the ability check the provider makes first is inside the figure.
   */
  telegramLatency: PacedLatency | null;
  /** An SMSC answering after PROVIDER_TIMEOUT_MS: copies per verification, ours beside BENCH_BASELINE_REF's. */
  lateProvider: LateProviderResults | null;
  notes: string[];
}

export interface ProviderBenchOptions {
  readonly settings: ProviderBenchSettings;
  /** The service's bench environment on `databaseUrl` (bench/run.ts serviceEnv), before provider settings. */
  readonly serviceEnv: () => NodeJS.ProcessEnv;
  /** The database the service children use (its own, so no other section's rows or workers are in the way). */
  readonly databaseUrl: string;
  readonly log: (text: string) => void;
  /** Filled in as each scenario ends, so a later failure keeps the earlier figures. */
  readonly out: ProviderResults;
}

/** The http provider's connection pool to the gateway (src/providers/http-gateway.ts). */
const httpProviderPoolSize = 16;

export function emptyProviderResults(settings: ProviderBenchSettings): ProviderResults {
  return { settings, clock: null, smppThroughput: null, smppLatency: null, httpLatency: null, receiptLatency: null, metaLatency: null, telegramLatency: null, lateProvider: null, notes: [] };
}

// ---------------------------------------------------------------------------------------------------------
// Peers

export interface Smsc {
  readonly child: Child<{ smppPort: string; controlUrl: string }>;
  readonly port: number;
  reset(recordEntries: boolean): Promise<void>;
  log(): Promise<{ submits: number; binds: number; entries: [string, number][] }>;
  /** SMSC clock minus ours. */
  offset(): Promise<{ offsetMs: number; rttMs: number }>;
}

export async function startSmsc(env: NodeJS.ProcessEnv = {}): Promise<Smsc> {
  const child = await startChild('serve-smsc.ts', { ...process.env, NODE_ENV: 'production', ...env }, (v) =>
    stringFields(v, ['smppPort', 'controlUrl']),
  );
  onCleanup(() => child.stop());
  const { controlUrl } = child.info;
  const getJson = async <T>(path: string, method = 'GET'): Promise<T> => {
    const res = await fetch(`${controlUrl}${path}`, { method });
    if (!res.ok) throw new Error(`SMSC control ${path}: ${res.status}`);
    return (await res.json()) as T;
  };
  return {
    child,
    port: Number(child.info.smppPort),
    reset: async (recordEntries) => {
      await getJson(`/reset?record=${recordEntries ? 1 : 0}`, 'POST');
    },
    log: () => getJson('/log'),
    offset: async () => {
      let best = { offsetMs: 0, rttMs: Number.POSITIVE_INFINITY };
      for (let i = 0; i < 30; i++) {
        const t0 = now();
        const { now: theirs } = await getJson<{ now: number }>('/now');
        const t1 = now();
        if (t1 - t0 < best.rttMs) best = { offsetMs: theirs - (t0 + t1) / 2, rttMs: t1 - t0 };
      }
      return best;
    },
  };
}

/** The operator's gateway: answers 200 {messageId} at once, notes when each destination's request was in. */
export interface Gateway {
  readonly url: string;
  /** now() when the request body of each destination (E.164) had arrived; the first one only. */
  readonly arrivals: Map<string, number>;
  /** verificationId -> messageId given. */
  readonly messageIds: Map<string, string>;
  requests(): number;
  connections(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startGateway(): Promise<Gateway> {
  const arrivals = new Map<string, number>();
  const messageIds = new Map<string, string>();
  let requests = 0;
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      requests++;
      let to = '';
      let verificationId = '';
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to?: unknown; verificationId?: unknown };
        to = typeof body.to === 'string' ? body.to : '';
        verificationId = typeof body.verificationId === 'string' ? body.verificationId : '';
      } catch {
        // answered all the same
      }
      if (to && !arrivals.has(to)) arrivals.set(to, at);
      const messageId = `gw-${verificationId || randomBytes(8).toString('hex')}`;
      if (verificationId) messageIds.set(verificationId, messageId);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId }));
    });
  });
  server.on('connection', () => connections++);
  // Keep-alive longer than any pause of the run, so a closed idle socket is not counted as churn.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/sms`,
    arrivals,
    messageIds,
    requests: () => requests,
    connections: () => connections,
    reset: () => {
      arrivals.clear();
      requests = 0;
      connections = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A webhook receiver that notes, per verification, when its action.otp.failed arrived. */
interface FailedReceiver {
  readonly url: string;
  readonly failed: Map<string, number>;
  other(): number;
  close(): Promise<void>;
}

async function startFailedReceiver(): Promise<FailedReceiver> {
  const failed = new Map<string, number>();
  let other = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event?: unknown; data?: { id?: unknown } };
        const id = body.data?.id;
        if (body.event === 'action.otp.failed' && typeof id === 'string') {
          if (!failed.has(id)) failed.set(id, at);
        } else other++;
      } catch {
        other++;
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    failed,
    other: () => other,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------
// 1. SMPP throughput

const smsText = 'Your verification code is 482913';
const sender = { ton: 1, npi: 1, addr: '2349010000000' };

function destination(n: number): string {
  return PhoneSequence.e164(10_000_000 + (n % 1_000_000));
}

async function providerThroughput(port: number, smscPid: number, s: ProviderBenchSettings): Promise<SmppSide> {
  const noop = () => undefined;
  const context: ProviderContext = {
    callbackUrl: null,
    callRingSeconds: 15,
    messageLog: { record: async () => undefined },
    logger: { info: noop, warn: noop, error: noop },
    onReceipt: async () => undefined,
  };
  // The module's own create, as the service builds it (default timings).
  const provider = smppProvider.create(
    {
      SMPP_URL: parseSmppUrl(`smpp://bench:benchpw@127.0.0.1:${port}`),
      SMPP_WINDOW: s.window,
      SMPP_SYSTEM_TYPE: '',
      SMPP_ENQUIRE_LINK_SECONDS: 30,
    },
    context,
  );
  await provider.start();
  // More callers than the window, as the send worker hands it every committed send at once: a freed slot
  // goes to a queued send straight away.
  const concurrency = s.window * 2;
  let counting = false;
  let stopped = false;
  let accepted = 0;
  let failed = 0;
  let n = 0;
  const caller = async () => {
    while (!stopped) {
      const i = n++;
      const result = await provider.send(
        {
          channel: 'sms',
          sendId: `s${i}`,
          verificationId: `v${i}`,
          to: destination(i),
          from: '+2349010000000',
          text: smsText,
          code: '482913',
        },
        // As the send worker calls it: each send bounded by PROVIDER_TIMEOUT_MS.
        AbortSignal.timeout(10_000),
      );
      if (!counting) continue;
      if (result.kind === 'accepted') accepted++;
      else failed++;
    }
  };
  const callers = Array.from({ length: concurrency }, () => caller());
  await sleep(1_000);
  counting = true;
  const t0 = performance.now();
  const meter = cpuMeter({ bench: process.pid, smsc: smscPid });
  await sleep(s.smppSeconds * 1000);
  counting = false;
  const cpu = meter();
  const seconds = (performance.now() - t0) / 1000;
  stopped = true;
  await Promise.all(callers);
  await provider.stop();
  return { submitsPerSecond: accepted / seconds, accepted, failed, seconds, concurrency, cpu, cpuMicrosPerSubmit: perSubmit(cpu, accepted) };
}

function perSubmit(cpu: CpuShares, accepted: number): SmppSide['cpuMicrosPerSubmit'] {
  const micros = (share: number | null | undefined) =>
    share === null || share === undefined || accepted === 0 ? null : Math.round(((share * cpu.seconds * 1e6) / accepted) * 10) / 10;
  return { bench: micros(cpu.processes.bench), smsc: micros(cpu.processes.smsc) };
}

async function bareThroughput(port: number, smscPid: number, s: ProviderBenchSettings): Promise<SmppSide> {
  const session = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  session.on('error', () => undefined);
  // The provider turns Nagle off too (src/providers/smpp/link.ts); without it the window stalls on loopback.
  session.socket.setNoDelay(true);
  const bind = await new Promise<PDU>((resolve) =>
    session.send(new PDU('bind_transceiver', { system_id: 'bench', password: 'benchpw', interface_version: 0x34 }), resolve),
  );
  if (bind.command_status !== 0) throw new Error(`bare client bind refused: ${bind.command_status}`);
  let counting = false;
  let stopped = false;
  let accepted = 0;
  let failed = 0;
  let outstanding = 0;
  let n = 0;
  let drained: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (drained = resolve));
  const submit = (): void => {
    const i = n++;
    outstanding++;
    const pdu = new PDU('submit_sm', {
      source_addr_ton: sender.ton,
      source_addr_npi: sender.npi,
      source_addr: sender.addr,
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: destination(i).slice(1),
      esm_class: 0,
      registered_delivery: 1,
      data_coding: 0,
      short_message: Buffer.from(smsText),
    });
    session.send(pdu, (response) => {
      outstanding--;
      if (counting) {
        if (response.command_status === 0 && typeof response['message_id'] === 'string') accepted++;
        else failed++;
      }
      if (!stopped) submit();
      else if (outstanding === 0) drained();
    });
  };
  for (let i = 0; i < s.window; i++) submit();
  await sleep(1_000);
  counting = true;
  const t0 = performance.now();
  const meter = cpuMeter({ bench: process.pid, smsc: smscPid });
  await sleep(s.smppSeconds * 1000);
  counting = false;
  const cpu = meter();
  const seconds = (performance.now() - t0) / 1000;
  stopped = true;
  await done;
  await new Promise<void>((resolve) => {
    session.send(new PDU('unbind'), () => resolve());
    setTimeout(resolve, 2_000).unref();
  });
  session.close();
  return { submitsPerSecond: accepted / seconds, accepted, failed, seconds, concurrency: s.window, cpu, cpuMicrosPerSubmit: perSubmit(cpu, accepted) };
}

// ---------------------------------------------------------------------------------------------------------
// 2-4. Paced requests to the service

export interface Sent {
  readonly key: string;
  readonly sentAt: number;
  status: number;
  answeredAt: number;
  body: string;
}

/**
 * Sends `count` requests at `rate` per second (due ones every ~2 ms, not in bursts) over a pool of
 * `connections`; notes when each left and when its answer came back.
 */
export async function paced(
  url: string,
  connections: number,
  count: number,
  rate: number,
  request: (i: number) => { key: string; path: string; headers: Record<string, string>; body: string },
): Promise<Sent[]> {
  const pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const sent: Sent[] = [];
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  try {
    let i = 0;
    while (i < count) {
      const due = Math.min(count, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
      for (; i < due; i++) {
        const { key, path, headers, body } = request(i);
        const item: Sent = { key, sentAt: now(), status: 0, answeredAt: 0, body: '' };
        sent.push(item);
        inFlight.push(
          pool
            .request({ path, method: 'POST', headers, body })
            .then(async (res) => {
              item.body = await res.body.text();
              item.answeredAt = now();
              item.status = res.statusCode;
            })
            .catch(() => {
              item.answeredAt = now();
            }),
        );
      }
      await sleep(2);
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  return sent;
}

/** Waits until every key has arrived (per `has`, after `refresh`), or nothing new came for `idleMs`, or `maxMs` passed. */
export async function awaitArrivals(
  keys: readonly string[],
  has: (key: string) => boolean,
  idleMs: number,
  maxMs: number,
  refresh: () => Promise<void> = async () => undefined,
): Promise<number> {
  const deadline = performance.now() + maxMs;
  let last = -1;
  let lastChange = performance.now();
  for (;;) {
    await refresh();
    const got = keys.filter(has).length;
    if (got === keys.length) return got;
    if (got !== last) {
      last = got;
      lastChange = performance.now();
    }
    if (performance.now() - lastChange > idleMs || performance.now() > deadline) return got;
    await sleep(200);
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const round = (x: number) => Math.round(x * 100) / 100;

/** The latency figures of a measured paced run, given when each ok request's effect reached its peer. */
export function latencyOf(
  rate: number,
  seconds: number,
  sent: readonly Sent[],
  arrivedAt: (item: Sent) => number | undefined,
  cpu: CpuShares | null,
  transactions: number | null = null,
): PacedLatency {
  const statuses: Record<string, number> = {};
  const total: number[] = [];
  const response: number[] = [];
  const afterResponse: number[] = [];
  let ok = 0;
  for (const item of sent) {
    const key = String(item.status || 'error');
    statuses[key] = (statuses[key] ?? 0) + 1;
    if (item.status !== 200) continue;
    ok++;
    response.push(item.answeredAt - item.sentAt);
    const at = arrivedAt(item);
    if (at === undefined) continue;
    total.push(Math.max(0, at - item.sentAt));
    afterResponse.push(at - item.answeredAt);
  }
  for (const list of [total, response, afterResponse]) list.sort((a, b) => a - b);
  return {
    rate,
    seconds,
    sent: sent.length,
    ok,
    statuses,
    matched: total.length,
    p50: round(percentile(total, 50)),
    p90: round(percentile(total, 90)),
    p99: round(percentile(total, 99)),
    max: round(total[total.length - 1] ?? 0),
    responseP50: round(percentile(response, 50)),
    responseP99: round(percentile(response, 99)),
    afterResponseP50: round(percentile(afterResponse, 50)),
    afterResponseP99: round(percentile(afterResponse, 99)),
    cpu,
    commits: transactions === null ? null : { transactions, requestsPerTransaction: transactions > 0 ? round(ok / transactions) : 0 },
  };
}

/** Transactions committed so far in the database of `db` (the statistics lag by up to a second). */
async function commitsSoFar(db: pg.Pool): Promise<number> {
  await db.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.query<{ n: string }>('SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()');
  return Number(rows[0]?.n ?? 0);
}

/** Counts the service's commits over `work`, less this connection's own two reads. */
export async function countCommits<T>(db: pg.Pool, work: () => Promise<T>): Promise<{ value: T; transactions: number }> {
  const before = await commitsSoFar(db);
  const value = await work();
  await sleep(1_200); // the backends report their counts when idle, at most every second
  return { value, transactions: Math.max(0, (await commitsSoFar(db)) - before - 2) };
}

export interface Service {
  readonly child: Child<{ url: string; clientId: string; clientSecret: string }>;
  readonly url: string;
  readonly token: string;
}

/** `dir`: another checkout's bench folder, to run its service (a baseline). */
/** Services started with a CPU profile so far: each writes its own file. */
let profiled = 0;

export async function startService(env: NodeJS.ProcessEnv, dir?: string): Promise<Service> {
  // BENCH_PROFILE_DIR: each service child writes a V8 CPU profile of its run there when it stops.
  const profileDir = process.env.BENCH_PROFILE_DIR;
  if (profileDir) env = { ...env, BENCH_CPU_PROFILE: path.join(profileDir, `service-${env.SMS_PROVIDER ?? 'log'}-${process.pid}-${(profiled += 1)}${dir ? '-baseline' : ''}.cpuprofile`) };
  const child = await startChild('serve-service.ts', env, (v) => stringFields(v, ['url', 'clientId', 'clientSecret']), 180_000, dir);
  onCleanup(() => child.stop());
  const token = await fetchToken(child.info.url, child.info.clientId, child.info.clientSecret);
  return { child, url: child.info.url, token };
}

/** POST /v1/otp/request at the rate: a warm-up (not measured), then the measured part. */
export async function pacedCreates(
  service: Service,
  s: ProviderBenchSettings,
  phones: PhoneSequence,
  webhookUrl: string | null,
  pids: Readonly<Record<string, number>>,
  db: pg.Pool,
  type = 'SEND_SMS',
): Promise<{ warm: Sent[]; measured: Sent[]; cpu: CpuShares; transactions: number }> {
  const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
  const create = () => {
    const local = phones.take();
    const body = JSON.stringify({ countryCode: '+234', phoneNumber: local, type, ...(webhookUrl && { webhookUrl }) });
    return { key: `+234${local.slice(1)}`, path: '/v1/otp/request', headers, body };
  };
  const warm = s.warmUpSeconds > 0 ? await paced(service.url, s.connections, Math.round(s.rate * s.warmUpSeconds), s.rate, create) : [];
  const meter = cpuMeter({ ...pids, service: service.child.pid, bench: process.pid });
  let cpu: CpuShares | null = null;
  const { value: measured, transactions } = await countCommits(db, async () => {
    const sent = await paced(service.url, s.connections, Math.round(s.rate * s.seconds), s.rate, create);
    cpu = meter();
    return sent;
  });
  if (!cpu) throw new Error('no CPU figures');
  return { warm, measured, cpu, transactions };
}

export const idOf = (body: string): string | null => {
  try {
    const id: unknown = (JSON.parse(body) as { data?: { id?: unknown } }).data?.id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
};

/**
 * Creates of `type` paced at the provider rate to a service whose provider reaches `receiver` (`env(receiver.url)`
 * and PUBLIC_BASE_URL on the bench's settings): from each create leaving this process to the receiver having the
 * request it keys by that create's number. Stops the service and closes the receiver.
 */
async function createToReceiver(
  o: ProviderBenchOptions,
  db: pg.Pool,
  receiver: JsonReceiver,
  type: string,
  phones: PhoneSequence,
  env: (url: string) => NodeJS.ProcessEnv,
): Promise<PacedLatency> {
  onCleanup(() => receiver.close());
  try {
    const service = await startService({ ...o.serviceEnv(), ...env(receiver.url), PUBLIC_BASE_URL: 'https://otp.bench.invalid' });
    try {
      const { measured, cpu, transactions } = await pacedCreates(service, o.settings, phones, null, {}, db, type);
      const wanted = measured.filter((m) => m.status === 200).map((m) => m.key);
      await awaitArrivals(wanted, (k) => receiver.arrivals.has(k), 3_000, 20_000);
      return latencyOf(o.settings.rate, o.settings.seconds, measured, (m) => receiver.arrivals.get(m.key), cpu, transactions);
    } finally {
      await service.child.stop();
    }
  } finally {
    await receiver.close();
  }
}

// ---------------------------------------------------------------------------------------------------------

export async function benchProviders(o: ProviderBenchOptions): Promise<void> {
  const db = new pg.Pool({ connectionString: o.databaseUrl, max: 2 });
  try {
    await run(o, db);
  } finally {
    await db.end();
  }
}

async function run(o: ProviderBenchOptions, db: pg.Pool): Promise<void> {
  const { settings: s, log, out } = o;
  const smsc = await startSmsc();
  out.clock = await smsc.offset();
  log(`providers: SMSC child on port ${smsc.port}; its clock is ${out.clock.offsetMs.toFixed(3)} ms from ours (round trip ${out.clock.rttMs.toFixed(2)} ms)`);

  // 1. Throughput, ours first, then the bare client, against the same SMSC.
  await smsc.reset(false);
  const provider = await providerThroughput(smsc.port, smsc.child.pid, s);
  log(`providers: smpp provider ${provider.submitsPerSecond.toFixed(0)} submits/s (${provider.accepted} accepted, ${provider.failed} failed)`);
  const bare = await bareThroughput(smsc.port, smsc.child.pid, s);
  log(`providers: bare smpp client ${bare.submitsPerSecond.toFixed(0)} submits/s (${bare.accepted} accepted, ${bare.failed} failed)`);
  out.smppThroughput = { window: s.window, provider, bare, smscSubmits: (await smsc.log()).submits };

  // 2. Create to submit_sm through the service.
  {
    const env = {
      ...o.serviceEnv(),
      SMS_PROVIDER: 'smpp',
      SMPP_URL: `smpp://bench:benchpw@127.0.0.1:${smsc.port}`,
      SMPP_WINDOW: String(s.window),
    };
    const service = await startService(env);
    await smsc.reset(true);
    const { measured, cpu, transactions } = await pacedCreates(service, s, new PhoneSequence(60_000_000), null, { smsc: smsc.child.pid }, db);
    const wanted = measured.filter((m) => m.status === 200).map((m) => m.key.slice(1));
    const submitted = new Map<string, number>();
    const refresh = async () => {
      for (const [dest, at] of (await smsc.log()).entries) if (!submitted.has(dest)) submitted.set(dest, at);
    };
    await awaitArrivals(wanted, (k) => submitted.has(k), 3_000, 20_000, refresh);
    const offset = out.clock.offsetMs;
    out.smppLatency = latencyOf(s.rate, s.seconds, measured, (m) => {
      const at = submitted.get(m.key.slice(1));
      return at === undefined ? undefined : at - offset;
    }, cpu, transactions);
    log(`providers: create→submit_sm ${JSON.stringify(out.smppLatency)}`);
    await service.child.stop();
  }
  await smsc.child.stop();

  // 3. Create to gateway request, then 4. receipt to webhook, on one service with SMS_PROVIDER=http.
  const gateway = await startGateway();
  onCleanup(() => gateway.close());
  const receiver = await startFailedReceiver();
  onCleanup(() => receiver.close());
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const service = await startService({
    ...o.serviceEnv(),
    SMS_PROVIDER: 'http',
    HTTP_GATEWAY_URL: gateway.url,
    HTTP_GATEWAY_SECRET: secret,
    PUBLIC_BASE_URL: 'https://otp.bench.invalid',
  });
  const { warm, measured, cpu, transactions } = await pacedCreates(service, s, new PhoneSequence(65_000_000), receiver.url, {}, db);
  const connectionsAfterWarmUp = gateway.connections();
  const wanted = measured.filter((m) => m.status === 200).map((m) => m.key);
  await awaitArrivals(wanted, (k) => gateway.arrivals.has(k), 3_000, 20_000);
  out.httpLatency = {
    ...latencyOf(s.rate, s.seconds, measured, (m) => gateway.arrivals.get(m.key), cpu, transactions),
    gatewayConnections: gateway.connections(),
    gatewayRequests: gateway.requests(),
    poolSize: httpProviderPoolSize,
  };
  log(`providers: create→gateway request ${JSON.stringify(out.httpLatency)} (connections after the warm-up: ${connectionsAfterWarmUp})`);

  // The send outcomes (messageIds) are committed just after the gateway answers: wait for all of them.
  try {
    const expected = warm.length + measured.length;
    const deadline = performance.now() + 15_000;
    while (performance.now() < deadline) {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM provider_messages WHERE provider = 'http'`);
      if ((rows[0]?.n ?? 0) >= gateway.messageIds.size || (rows[0]?.n ?? 0) >= expected) break;
      await sleep(100);
    }
    const webhook = new Webhook(secret);
    const receipts = (created: readonly Sent[]) => {
      const ids = created.map((c) => (c.status === 200 ? idOf(c.body) : null)).filter((id): id is string => id !== null);
      return ids.filter((id) => gateway.messageIds.has(id));
    };
    const send = (ids: readonly string[]) =>
      paced(service.url, s.connections, ids.length, s.rate, (i) => {
        const id = ids[i] ?? '';
        const body = JSON.stringify({ messageId: gateway.messageIds.get(id), status: 'UNDELIVERED', detail: 'bench: absent subscriber' });
        const msgId = `msg_${randomBytes(8).toString('hex')}`;
        const at = new Date();
        const headers = {
          'content-type': 'application/json',
          'webhook-id': msgId,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': webhook.sign(msgId, at, body),
        };
        return { key: id, path: '/callbacks/http', headers, body };
      });
    const warmIds = receipts(warm);
    if (warmIds.length > 0) await send(warmIds.slice(0, Math.round(s.rate * s.warmUpSeconds)));
    const measuredIds = receipts(measured);
    const meter = cpuMeter({ service: service.child.pid, bench: process.pid });
    let receiptCpu: CpuShares | null = null;
    const { value: posted, transactions } = await countCommits(db, async () => {
      const sent = await send(measuredIds);
      receiptCpu = meter();
      return sent;
    });
    const okIds = posted.filter((p) => p.status === 200).map((p) => p.key);
    await awaitArrivals(okIds, (k) => receiver.failed.has(k), 3_000, 30_000);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM verifications WHERE id = ANY($1::uuid[]) AND status = 'FAILED'`,
      [measuredIds],
    );
    out.receiptLatency = {
      ...latencyOf(s.rate, s.seconds, posted, (p) => receiver.failed.get(p.key), receiptCpu, transactions),
      failedVerifications: rows[0]?.n ?? 0,
      otherEvents: receiver.other(),
    };
    log(`providers: receipt→webhook ${JSON.stringify(out.receiptLatency)}`);
  } finally {
    await service.child.stop();
    await gateway.close();
    await receiver.close();
  }

  // 5. Create to Graph API request: WHATSAPP through meta, beside the HTTP gateway's figure above.
  out.metaLatency = await createToReceiver(o, db, await startGraphReceiver(), 'WHATSAPP', new PhoneSequence(67_000_000), (url) => ({
    WHATSAPP_PROVIDER: 'meta',
    META_BASE_URL: url,
    META_ACCESS_TOKEN: 'EAAbenchaccesstoken0123456789',
    META_PHONE_NUMBER_ID: '106540352242922',
    META_APP_SECRET: '0123456789abcdef0123456789abcdef',
    META_WEBHOOK_VERIFY_TOKEN: 'bench-verify-token-0123456789',
    WHATSAPP_TEMPLATE: 'otp_code',
  }));
  log(`providers: create→Graph request ${JSON.stringify(out.metaLatency)}`);

  // 6. Create to sendVerificationMessage: TELEGRAM through telegram (checkSendAbility, then the send), beside 5.
  out.telegramLatency = await createToReceiver(o, db, await startTelegramReceiver(), 'TELEGRAM', new PhoneSequence(68_000_000), (url) => ({
    TELEGRAM_PROVIDER: 'telegram',
    TELEGRAM_GATEWAY_TOKEN: 'AAGbenchgatewaytoken0123456789',
    TELEGRAM_BASE_URL: url,
  }));
  log(`providers: create→sendVerificationMessage ${JSON.stringify(out.telegramLatency)}`);

  // 7. An SMSC that answers after the time-out: copies per verification, ours and the baseline ref's.
  out.lateProvider = await benchLateProvider({
    rate: Number(process.env.BENCH_LATE_RATE ?? 200),
    seconds: Number(process.env.BENCH_LATE_SECONDS ?? 5),
    connections: s.connections,
    serviceEnv: o.serviceEnv,
    db,
    log,
    baselineRef: process.env.BENCH_BASELINE_REF ?? null,
  });
}
