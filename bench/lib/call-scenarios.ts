/**
 * The calls section: the `sip` provider measured against SIPp (Debian's sip-tester) ringing each call, each
 * figure beside a baseline measured in the same run (bench/README.md, "calls").
 *
 * 1. Create to INVITE: the service (CALL_PROVIDER=sip) under DROPPED_CALL creates paced at a fixed rate; for each
 *    create, from the request leaving this process to SIPp having the INVITE (matched by the number dialled).
 *    Baseline: the same creates with CALL_PROVIDER=http, to the operator's gateway in this process: the same
 *    service path (commit, send worker, provider) with the provider that has the least to do.
 * 2. INVITE to CANCEL after the 180: from SIPp sending the 180 to SIPp having our CANCEL (both on SIPp's clock, so
 *    both loopback hops and SIPp's own turn-around are in it), for (a) the calls of 1 through the service, (b) the
 *    provider alone in this process placing calls at the same rate, and (c) the baseline: a bare UDP client in this
 *    process that sends a prebuilt CANCEL as soon as it reads a 180, with no SIP stack at all.
 *
 * SIPp writes its message trace with wall-clock times (gettimeofday); this process notes
 * performance.timeOrigin + performance.now(), the same clock to well under a millisecond on one machine.
 */
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OutgoingCall, ProviderContext, SendResult } from '../../src/channels/provider-port.js';
import { createSipProvider } from '../../src/providers/sip.js';
import { sippAddress, sipTrunkSettings, sippMissing, startSipp, type SippRun } from '../../test/providers/sipp.js';
import { onCleanup } from './cleanup.js';
import { PhoneSequence } from './phones.js';
import {
  awaitArrivals,
  cpuMeter,
  latencyOf,
  paced,
  startGateway,
  startService,
  type CpuShares,
  type PacedLatency,
  type Sent,
  type Service,
} from './provider-scenarios.js';

const now = () => performance.timeOrigin + performance.now();

export interface CallBenchSettings {
  /** DROPPED_CALL creates (and calls) per second. */
  readonly rate: number;
  /** Measured seconds of each paced run. */
  readonly seconds: number;
  /** Paced but unmeasured seconds before each create run. */
  readonly warmUpSeconds: number;
  /** HTTP connections of the paced loops. */
  readonly connections: number;
}

/** Times from the 180 leaving SIPp to our CANCEL reaching it, in ms. */
export interface RingToCancel {
  readonly calls: number;
  /** Calls whose 180 and CANCEL are both in SIPp's trace. */
  readonly matched: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export interface CallResults {
  readonly settings: CallBenchSettings;
  createToInvite: PacedLatency | null;
  createToGateway: PacedLatency | null;
  ringToCancel: { service: RingToCancel | null; provider: RingToCancel | null; bare: RingToCancel | null };
  /** What SIPp counted of each run: its exit code and the calls it saw. */
  sipp: Record<string, { exit: number | null | 'running'; invites: number; cancels: number }>;
  notes: string[];
}

export function emptyCallResults(settings: CallBenchSettings): CallResults {
  return { settings, createToInvite: null, createToGateway: null, ringToCancel: { service: null, provider: null, bare: null }, sipp: {}, notes: [] };
}

export interface CallBenchOptions {
  readonly settings: CallBenchSettings;
  /** The service's bench environment (bench/run.ts serviceEnv), before provider settings. */
  readonly serviceEnv: () => NodeJS.ProcessEnv;
  readonly log: (text: string) => void;
  readonly out: CallResults;
}

/** SIPp's message trace, read: when each INVITE came (by number dialled), each 180 left and each CANCEL came (by Call-ID). */
interface Trace {
  readonly invites: Map<string, number>;
  /** The Call-ID of the first INVITE to each number dialled. */
  readonly callIds: Map<string, string>;
  readonly ringing: Map<string, number>;
  readonly cancels: Map<string, number>;
}

function readTrace(text: string): Trace {
  const trace: Trace = { invites: new Map(), callIds: new Map(), ringing: new Map(), cancels: new Map() };
  for (const block of text.split(/^-{20,} /m).slice(1)) {
    const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)\n\S+ message (received|sent)[^\n]*\n\s*\n([^\n]*)/.exec(block);
    if (!m?.[1] || !m[2] || !m[3] || !m[5]) continue;
    // Local time, as SIPp writes it; the fraction in microseconds.
    const at = new Date(`${m[1]}T${m[2]}`).getTime() + Number(m[3]) * 1000;
    const callId = /^Call-ID: *(\S+)/im.exec(block)?.[1] ?? '';
    const first = m[5];
    if (m[4] === 'received' && first.startsWith('INVITE ')) {
      const dialled = /^INVITE sip:(\+?\d+)@/.exec(first)?.[1];
      if (dialled && !trace.invites.has(dialled)) {
        trace.invites.set(dialled, at);
        trace.callIds.set(dialled, callId);
      }
    } else if (m[4] === 'sent' && first.startsWith('SIP/2.0 180') && !trace.ringing.has(callId)) trace.ringing.set(callId, at);
    else if (m[4] === 'received' && first.startsWith('CANCEL ') && !trace.cancels.has(callId)) trace.cancels.set(callId, at);
  }
  return trace;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}
const round = (x: number) => Math.round(x * 100) / 100;

function ringToCancel(trace: Trace, callIds: Iterable<string> = trace.ringing.keys()): RingToCancel {
  const times: number[] = [];
  let calls = 0;
  for (const callId of callIds) {
    calls++;
    const rang = trace.ringing.get(callId);
    const cancelled = trace.cancels.get(callId);
    if (rang !== undefined && cancelled !== undefined) times.push(cancelled - rang);
  }
  times.sort((a, b) => a - b);
  return { calls, matched: times.length, p50: round(percentile(times, 50)), p90: round(percentile(times, 90)), p99: round(percentile(times, 99)), max: round(times.at(-1) ?? 0) };
}

/** SIPp ringing every call (test/peers/sipp/ring.xml: 100, 180, takes the CANCEL), for `calls` calls. */
async function ringingSipp(calls: number, seconds: number): Promise<SippRun> {
  const sipp = await startSipp(
    'ring.xml',
    'udp',
    { FROM_RE: '^ *<sip:\\+?[0-9]+@', PAI_RE: '^ *<sip:\\+?[0-9]+@', STATUS: '180', PHRASE: 'Ringing' },
    { calls, timeoutSeconds: seconds + 120 },
  );
  onCleanup(() => sipp.stop());
  return sipp;
}

/** Waits for SIPp to end (it does after its last call), at most `ms`, and reads its trace. */
async function finish(sipp: SippRun, name: string, out: CallResults, ms = 30_000): Promise<Trace> {
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([sipp.exited, new Promise<'running'>((resolve) => (timer = setTimeout(() => resolve('running'), ms)))]);
  clearTimeout(timer);
  const trace = readTrace(sipp.messages());
  out.sipp[name] = { exit, invites: trace.invites.size, cancels: trace.cancels.size };
  sipp.stop();
  return trace;
}

/** DROPPED_CALL creates at the rate: a warm-up (not measured), then the measured part. */
async function pacedCallCreates(service: Service, s: CallBenchSettings, phones: PhoneSequence): Promise<{ measured: Sent[]; cpu: CpuShares }> {
  const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
  const create = () => {
    const local = phones.take();
    return { key: `+234${local.slice(1)}`, path: '/v1/otp/request', headers, body: JSON.stringify({ countryCode: '+234', phoneNumber: local, type: 'DROPPED_CALL' }) };
  };
  if (s.warmUpSeconds > 0) await paced(service.url, s.connections, Math.round(s.rate * s.warmUpSeconds), s.rate, create);
  const meter = cpuMeter({ service: service.child.pid, bench: process.pid });
  const measured = await paced(service.url, s.connections, Math.round(s.rate * s.seconds), s.rate, create);
  return { measured, cpu: meter() };
}

export async function benchCalls(o: CallBenchOptions): Promise<void> {
  const { settings: s, log, out } = o;
  const missing = sippMissing();
  if (missing) {
    out.notes.push(`Calls: not measured, ${missing}.`);
    return;
  }
  const perRun = Math.round(s.rate * (s.warmUpSeconds + s.seconds));

  // 1 and 2a. Through the service, CALL_PROVIDER=sip.
  {
    const sipp = await ringingSipp(perRun, s.warmUpSeconds + s.seconds);
    const service = await startService({
      ...o.serviceEnv(),
      CALL_PROVIDER: 'sip',
      SIP_TRUNK_URI: `sip:${sippAddress}:${sipp.port}`,
      SIP_LOCAL_ADDRESS: '127.0.0.1',
    });
    const { measured, cpu } = await pacedCallCreates(service, s, new PhoneSequence(70_000_000));
    const trace = await finish(sipp, 'service', out);
    out.createToInvite = latencyOf(s.rate, s.seconds, measured, (m) => trace.invites.get(m.key), cpu);
    // The measured creates' calls only, as for create-to-INVITE: the warm-up's first calls pay for the JIT.
    const measuredCalls = measured.map((m) => trace.callIds.get(m.key)).filter((id): id is string => id !== undefined);
    out.ringToCancel.service = ringToCancel(trace, measuredCalls);
    log(`calls: create→INVITE ${JSON.stringify(out.createToInvite)}`);
    log(`calls: 180→CANCEL through the service ${JSON.stringify(out.ringToCancel.service)}`);
    await service.child.stop();
  }

  // 1, baseline: the same creates through CALL_PROVIDER=http to a gateway in this process.
  {
    const gateway = await startGateway();
    onCleanup(() => gateway.close());
    const service = await startService({
      ...o.serviceEnv(),
      CALL_PROVIDER: 'http',
      HTTP_GATEWAY_URL: gateway.url,
      HTTP_GATEWAY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      PUBLIC_BASE_URL: 'https://otp.bench.invalid',
    });
    const { measured, cpu } = await pacedCallCreates(service, s, new PhoneSequence(75_000_000));
    const wanted = measured.filter((m) => m.status === 200).map((m) => m.key);
    await awaitArrivals(wanted, (k) => gateway.arrivals.has(k), 3_000, 20_000);
    out.createToGateway = latencyOf(s.rate, s.seconds, measured, (m) => gateway.arrivals.get(m.key), cpu);
    log(`calls: create→gateway request (baseline) ${JSON.stringify(out.createToGateway)}`);
    await service.child.stop();
    await gateway.close();
  }

  // 2b. The provider alone, placing calls at the rate from this process.
  {
    const calls = Math.round(s.rate * s.seconds);
    const sipp = await ringingSipp(calls, s.seconds);
    const noop = () => undefined;
    const context: ProviderContext = {
      callbackUrl: null,
      callRingSeconds: 15,
      messageLog: { record: async () => undefined },
      logger: { info: noop, warn: noop, error: noop },
      onReceipt: async () => undefined,
    };
    const provider = createSipProvider(
      sipTrunkSettings(`sip:${sippAddress}:${sipp.port}`),
      context,
    );
    await provider.start();
    const results = await pacedSends(calls, s.rate, (i) =>
      provider.send({ channel: 'call', sendId: `s${i}`, verificationId: `v${i}`, to: PhoneSequence.e164(80_000_000 + i), callerId: '+2349010004821' } satisfies OutgoingCall, AbortSignal.timeout(20_000)),
    );
    const trace = await finish(sipp, 'provider', out);
    await provider.stop();
    out.ringToCancel.provider = ringToCancel(trace);
    const refused = results.filter((r) => r.kind !== 'accepted').length;
    if (refused > 0) out.notes.push(`Calls: ${refused} of ${calls} provider sends were not accepted.`);
    log(`calls: 180→CANCEL, provider alone ${JSON.stringify(out.ringToCancel.provider)}`);
  }

  // 2c. Baseline: a bare UDP client answering each 180 with a prebuilt CANCEL.
  {
    const calls = Math.round(s.rate * s.seconds);
    const sipp = await ringingSipp(calls, s.seconds);
    await bareCalls(sipp.port, calls, s.rate);
    const trace = await finish(sipp, 'bare', out);
    out.ringToCancel.bare = ringToCancel(trace);
    log(`calls: 180→CANCEL, bare UDP client ${JSON.stringify(out.ringToCancel.bare)}`);
  }
}

/** Calls `send(i)` for i below `count`, `rate` per second spread evenly, and waits for every result. */
async function pacedSends(count: number, rate: number, send: (i: number) => Promise<SendResult>): Promise<SendResult[]> {
  const pending: Promise<SendResult>[] = [];
  const start = performance.now();
  let i = 0;
  while (i < count) {
    const due = Math.min(count, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    for (; i < due; i++) pending.push(send(i));
    await sleep(2);
  }
  return Promise.all(pending);
}

/**
 * The least a UAC can do: prebuilt INVITEs at the rate, a prebuilt CANCEL the moment a 180 is read, an ACK for the
 * 487; no parser beyond the start line and Call-ID, no transaction state, no retransmissions (loopback loses
 * nothing). Waits until every call has had its 487 or 10 s have passed after the last INVITE.
 */
async function bareCalls(port: number, count: number, rate: number): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const local = `127.0.0.1:${socket.address().port}`;
  const target = `${sippAddress}:${port}`;
  const lines = (l: readonly string[]) => Buffer.from(`${l.join('\r\n')}\r\n\r\n`);
  const head = (method: string, i: number, cseq: string, to: string) => [
    `${method} sip:${PhoneSequence.e164(90_000_000 + i)}@${target} SIP/2.0`,
    `Via: SIP/2.0/UDP ${local};branch=z9hG4bKbare${i}`,
    'Max-Forwards: 70',
    `From: <sip:+2349010004821@${sippAddress}>;tag=bare${i}`,
    `To: ${to}`,
    `Call-ID: bare-${i}`,
    `CSeq: ${cseq}`,
  ];
  const toOf = (i: number) => `<sip:${PhoneSequence.e164(90_000_000 + i)}@${target}>`;
  let ended = 0;
  socket.on('message', (data) => {
    const text = data.toString('latin1');
    const i = Number(/^Call-ID: *bare-(\d+)/m.exec(text)?.[1] ?? -1);
    if (i < 0) return;
    if (text.startsWith('SIP/2.0 180')) socket.send(lines([...head('CANCEL', i, '1 CANCEL', toOf(i)), 'Content-Length: 0']), port, sippAddress);
    else if (text.startsWith('SIP/2.0 487')) {
      const to = /^To: *(.*)$/m.exec(text)?.[1]?.trim() ?? toOf(i);
      socket.send(lines([...head('ACK', i, '1 ACK', to), 'Content-Length: 0']), port, sippAddress);
      ended++;
    }
  });
  const start = performance.now();
  let i = 0;
  while (i < count) {
    const due = Math.min(count, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    for (; i < due; i++) {
      const invite = [
        ...head('INVITE', i, '1 INVITE', toOf(i)),
        `Contact: <sip:${local}>`,
        `P-Asserted-Identity: <sip:+2349010004821@${sippAddress}>`,
        'Content-Length: 0',
      ];
      socket.send(lines(invite), port, sippAddress);
    }
    await sleep(2);
  }
  const deadline = now() + 10_000;
  while (ended < count && now() < deadline) await sleep(50);
  socket.close();
}
