/**
 * `node --import tsx bench/voice-first-rtp.ts [CALLS]`: answered-to-first-RTP-packet of SIP voice calls (issue 19,
 * target under 100 ms). The sip provider places CALLS voice calls, one after another, to SIPp (Debian's
 * sip-tester) running test/peers/sipp/voice-answer.xml, whose SDP answer points at a UDP socket of this process.
 * Each figure is from SIPp sending the 200 OK (its message trace, wall clock) to this process receiving the call's
 * first RTP packet (the one with the marker bit, by SSRC): both loopback hops, our SIP handling, the ACK, the
 * G.711 encoding of the call's audio and the first packet are in it. The audio is synthesised before the INVITE
 * (each locale's digits once, then kept), as in the service. Not part of `npm run bench`'s table: it prints its
 * figures and writes nothing.
 */
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { OutgoingVoice } from '../src/channels/provider-port.js';
import { defaultWords, voiceSentence } from '../src/domain/spoken-code.js';
import { createSipProvider } from '../src/providers/sip.js';
import { exactly, sippAddress, sipTrunkSettings, sippMissing, startSipp } from '../test/providers/sipp.js';

const calls = Number(process.argv[2] ?? 20);
const caller = '+2349010000555';
const now = () => performance.timeOrigin + performance.now();
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const missing = sippMissing();
  if (missing) throw new Error(missing);
  const firstPackets: number[] = [];
  const seen = new Set<number>();
  const rtp = dgram.createSocket('udp4');
  rtp.on('message', (packet) => {
    const ssrc = packet.readUInt32BE(8);
    if (((packet[1] ?? 0) & 0x80) !== 0 && !seen.has(ssrc)) {
      seen.add(ssrc);
      firstPackets.push(now());
    }
  });
  await new Promise<void>((resolve) => rtp.bind(0, '127.0.0.1', () => resolve()));
  const sipp = await startSipp(
    'voice-answer.xml',
    'udp',
    {
      FROM_RE: `^ *<sip:${exactly(caller)}@${exactly(sippAddress)}>;tag=[0-9a-f]+ *$`,
      PAI_RE: `^ *<sip:${exactly(caller)}@${exactly(sippAddress)}> *$`,
      RTP_IP: '127.0.0.1',
      RTP_PORT: String(rtp.address().port),
      PT: '0',
      CODEC: 'PCMU',
    },
    { calls, timeoutSeconds: 30 + calls * 5 },
  );
  const internal: number[] = [];
  const provider = createSipProvider(
    sipTrunkSettings(`sip:${sippAddress}:${sipp.port}`),
    { callbackUrl: null, callRingSeconds: 5, onReceipt: async () => undefined, messageLog: { record: async () => undefined }, logger: silent },
    { lingerMs: 1_000, stopGraceMs: 60_000, connectTimeoutMs: 2_000, onFirstPacket: (ms) => internal.push(ms) },
  );
  try {
    await provider.start();
    for (let i = 0; i < calls; i++) {
      const code = String(1000 + i);
      const voice: OutgoingVoice = { channel: 'voice', sendId: `s-${i}`, verificationId: `v-${i}`, to: `+23480120${String(i).padStart(5, '0')}`, from: caller, code, language: 'en', sentence: voiceSentence('en', code), words: defaultWords('en'), repeat: 1 };
      const result = await provider.send(voice, AbortSignal.timeout(20_000));
      if (result.kind !== 'accepted') throw new Error(`call ${i}: ${JSON.stringify(result)}`);
    }
    await provider.stop();
    const exit = await sipp.exited;
    // The first 200 OK to each call's INVITE (SIPp sends it again until our ACK comes), in the order sent.
    const answered = new Map<string, number>();
    for (const block of sipp.messages().split(/^-{20,} /m).slice(1)) {
      const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)\n\S+ message sent[^\n]*\n\s*\n(SIP\/2\.0 200 OK)/.exec(block);
      const callId = /^Call-ID: *(\S+)/im.exec(block)?.[1];
      if (m?.[1] && m[2] && m[3] && callId && /^CSeq: *\d+ INVITE/im.test(block) && !answered.has(callId)) {
        answered.set(callId, new Date(`${m[1]}T${m[2]}`).getTime() + Number(m[3]) * 1000);
      }
    }
    const firstAnswers = [...answered.values()];
    const pairs = Math.min(firstAnswers.length, firstPackets.length);
    const external = Array.from({ length: pairs }, (_, i) => (firstPackets[i] ?? 0) - (firstAnswers[i] ?? 0)).sort((a, b) => a - b);
    const inside = [...internal].sort((a, b) => a - b);
    const show = (xs: readonly number[]) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p90 ${percentile(xs, 90).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms, max ${(xs.at(-1) ?? Number.NaN).toFixed(1)} ms`;
    console.log(`SIP voice, ${calls} calls (SIPp exit ${exit}, ${pairs} matched)`);
    console.log(`answered (SIPp's 200 OK) to first RTP packet received: ${show(external)}`);
    console.log(`inside the provider (200 OK handled to first packet sent): ${show(inside)}`);
  } finally {
    sipp.stop();
    rtp.close();
  }
}

await main();
