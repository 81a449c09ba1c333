import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import type { OutgoingVoice, SendResult } from '../../src/channels/provider-port.js';
import { defaultWords, voiceIntroduction, voiceSentence } from '../../src/domain/spoken-code.js';
import { createSipProvider, type SipTuning } from '../../src/providers/sip.js';
import { encodeG711, type G711Codec } from '../../src/providers/sip/g711.js';
import { SpokenPrompts } from '../../src/providers/sip/speech.js';
import { exactly, sippAddress, sippMissing, startSipp, sipTrunkSettings } from './sipp.js';
import { assertLogsHide, recordingContext } from './support.js';

/**
 * Voice calls through the sip provider (contract 13) against SIPp (Debian's sip-tester) as the far end: SIPp
 * answers with an SDP naming a UDP socket of this test, which receives the RTP stream and checks it: RTP version,
 * the codec the answer chose, 160-byte packets about 20 ms apart, sequence numbers, timestamps, one SSRC, the
 * marker on the first packet, the whole duration, and that the audio is exactly what espeak-ng synthesised for
 * the code (the same prompts, encoded in G.711). Busy and unanswered calls are SIPp's scenarios of dropped calls.
 */

const missing = sippMissing();
const caller = '+2349010000555';
const fast: Partial<SipTuning> = { lingerMs: 1_000, stopGraceMs: 3_000, connectTimeoutMs: 2_000 };
const identityWords = {
  FROM_RE: `^ *<sip:${exactly(caller)}@${exactly(sippAddress)}>;tag=[0-9a-f]+ *$`,
  PAI_RE: `^ *<sip:${exactly(caller)}@${exactly(sippAddress)}> *$`,
};

function voiceOf(code: string, repeat: number, language = 'en'): OutgoingVoice {
  return { channel: 'voice', sendId: 's-1', verificationId: 'v-1', to: '+2348012345678', from: caller, code, language, sentence: voiceSentence(language, code), words: defaultWords(language), repeat };
}

function sipProviderFor(port: number, ringSeconds: number) {
  const context = { ...recordingContext(null), callRingSeconds: ringSeconds };
  const firstPackets: number[] = [];
  const provider = createSipProvider(
    sipTrunkSettings(`sip:${sippAddress}:${port}`),
    context,
    { ...fast, onFirstPacket: (ms) => firstPackets.push(ms) },
  );
  return { provider, context, firstPackets };
}

interface Received {
  readonly at: number;
  readonly packet: Buffer;
}

/** A UDP socket on 127.0.0.1 keeping every datagram with its arrival time. */
async function rtpReceiver(): Promise<{ port: number; packets: Received[]; close: () => void }> {
  const socket = dgram.createSocket('udp4');
  const packets: Received[] = [];
  socket.on('message', (packet) => packets.push({ at: performance.now(), packet }));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return { port: socket.address().port, packets, close: () => socket.close() };
}

async function sippEnded(exited: Promise<number | null>, ms: number): Promise<number | null | 'running'> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([exited, new Promise<'running'>((resolve) => (timer = setTimeout(() => resolve('running'), ms)))]);
  clearTimeout(timer);
  return ended;
}

describe('sip voice calls against SIPp', { skip: missing ?? false }, () => {
  const prompts = new SpokenPrompts(null, voiceIntroduction);

  for (const [codec, payloadType] of [['PCMU', 0], ['PCMA', 8]] as const) {
    it(`answered: the code is played as ${codec} over RTP, 20 ms packets of the synthesised prompt, then BYE`, async () => {
      const voice = voiceOf('4129', codec === 'PCMU' ? 2 : 1);
      const receiver = await rtpReceiver();
      const sipp = await startSipp('voice-answer.xml', 'udp', { ...identityWords, RTP_IP: '127.0.0.1', RTP_PORT: String(receiver.port), PT: String(payloadType), CODEC: codec }, { timeoutSeconds: 60 });
      const { provider, context, firstPackets } = sipProviderFor(sipp.port, 5);
      let result: SendResult;
      try {
        await provider.start();
        result = await provider.send(voice, AbortSignal.timeout(30_000));
        assert.equal(result.kind, 'accepted', JSON.stringify(result));
        assert.equal(result.kind === 'accepted' && result.delivered, true, 'answered: delivered');
        assert.equal(await sippEnded(sipp.exited, 45_000), 0, `SIPp's scenario (ACK, then BYE after the audio) did not pass: ${sipp.errors()}`);
        await provider.stop();
      } finally {
        sipp.stop();
        receiver.close();
      }
      assertLogsHide(context.lines, [voice.code]);

      const expected = encodeG711(await prompts.audio(voice.language, voice.code, voice.repeat), codec as G711Codec);
      const packets = receiver.packets;
      const count = Math.ceil(expected.length / 160);
      assert.equal(packets.length, count, `one packet per 20 ms of audio (${expected.length} samples)`);
      const first = packets[0]?.packet;
      assert.ok(first);
      const ssrc = first.readUInt32BE(8);
      packets.forEach(({ packet }, n) => {
        assert.equal(packet.length, 12 + 160, 'a 12-byte header and 160 samples');
        assert.equal(packet[0], 0x80, 'RTP version 2, no padding, extension or CSRC');
        assert.equal((packet[1] ?? 0) & 0x7f, payloadType, 'the codec the answer chose');
        assert.equal(((packet[1] ?? 0) & 0x80) !== 0, n === 0, 'the marker on the first packet only');
        assert.equal(packet.readUInt16BE(2), (first.readUInt16BE(2) + n) & 0xffff, 'consecutive sequence numbers');
        assert.equal(packet.readUInt32BE(4), (first.readUInt32BE(4) + n * 160) >>> 0, 'timestamps 160 samples apart');
        assert.equal(packet.readUInt32BE(8), ssrc, 'one SSRC');
      });
      const audio = Buffer.concat(packets.map(({ packet }) => packet.subarray(12)));
      assert.ok(audio.subarray(0, expected.length).equals(expected), 'the audio is the synthesised prompt, byte for byte');
      assert.ok(audio.subarray(expected.length).every((b) => b === (codec === 'PCMU' ? 0xff : 0xd5)), 'the last packet padded with silence');
      // Paced, not sent in a burst: the stream lasts about as long as the audio (generous bounds: shared CPUs).
      const span = (packets.at(-1)?.at ?? 0) - (packets[0]?.at ?? 0);
      const audioMs = (count - 1) * 20;
      assert.ok(span >= audioMs * 0.9 && span <= audioMs + 3_000, `stream of ${span.toFixed(0)} ms for ${audioMs} ms of audio`);
      assert.ok(audioMs > 1_500, 'the prompt is audible speech, not a click');
      assert.equal(firstPackets.length, 1);
    });
  }

  it('the callee hangs up while the code plays: its BYE is answered, the audio stops, and no BYE of ours follows', async () => {
    const voice = voiceOf('412907', 3);
    const receiver = await rtpReceiver();
    const sipp = await startSipp('voice-hangup.xml', 'udp', { FROM_RE: identityWords.FROM_RE, RTP_IP: '127.0.0.1', RTP_PORT: String(receiver.port) }, { timeoutSeconds: 30 });
    const { provider } = sipProviderFor(sipp.port, 5);
    try {
      await provider.start();
      const result = await provider.send(voice, AbortSignal.timeout(20_000));
      assert.equal(result.kind, 'accepted', JSON.stringify(result));
      assert.equal(await sippEnded(sipp.exited, 20_000), 0, `SIPp's BYE was not answered 200: ${sipp.errors()}`);
      const stopped = receiver.packets.length;
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(receiver.packets.length, stopped, 'no audio after the callee hung up');
      await provider.stop();
      const full = Math.ceil((await prompts.audio(voice.language, voice.code, voice.repeat)).length / 160);
      assert.ok(stopped > 0 && stopped < full / 2, `${stopped} of ${full} packets played`);
      const received = sipp.messages().split(/^-{20,} /m).filter((block) => /message received/.test(block));
      assert.ok(!received.some((block) => /^\s*BYE sip:/m.test(block)), 'we sent no BYE');
    } finally {
      sipp.stop();
      receiver.close();
    }
  });

  it('a call still playing when the provider stops is ended with a BYE', async () => {
    const receiver = await rtpReceiver();
    const sipp = await startSipp('voice-answer.xml', 'udp', { ...identityWords, RTP_IP: '127.0.0.1', RTP_PORT: String(receiver.port), PT: '0', CODEC: 'PCMU' }, { timeoutSeconds: 15 });
    const context = { ...recordingContext(null), callRingSeconds: 5 };
    const provider = createSipProvider(
      sipTrunkSettings(`sip:${sippAddress}:${sipp.port}`),
      context,
      { ...fast, stopGraceMs: 300 },
    );
    try {
      await provider.start();
      const result = await provider.send(voiceOf('412907', 3), AbortSignal.timeout(20_000));
      assert.equal(result.kind, 'accepted', JSON.stringify(result));
      await provider.stop();
      assert.equal(await sippEnded(sipp.exited, 12_000), 0, `SIPp never had our BYE: ${sipp.errors()}`);
    } finally {
      sipp.stop();
      receiver.close();
    }
  });

  it('busy (486): permanent, nothing played', async () => {
    const receiver = await rtpReceiver();
    const sipp = await startSipp('final.xml', 'udp', { ...identityWords, STATUS: '486', PHRASE: 'Busy Here' });
    const { provider } = sipProviderFor(sipp.port, 5);
    try {
      await provider.start();
      const result = await provider.send(voiceOf('4129', 1), AbortSignal.timeout(20_000));
      assert.deepEqual(result, { kind: 'permanent', reason: 'trunk answered 486 Busy Here' });
      assert.equal(await sippEnded(sipp.exited, 10_000), 0, sipp.errors());
      await provider.stop();
    } finally {
      sipp.stop();
      receiver.close();
    }
    assert.equal(receiver.packets.length, 0);
  });

  it('ringing but not answered within CALL_RING_SECONDS: CANCEL, and undelivered (permanent)', async () => {
    const sipp = await startSipp('ring.xml', 'udp', { ...identityWords, STATUS: '180', PHRASE: 'Ringing' });
    const { provider } = sipProviderFor(sipp.port, 2);
    try {
      await provider.start();
      const started = performance.now();
      const result = await provider.send(voiceOf('4129', 1), AbortSignal.timeout(20_000));
      assert.equal(result.kind, 'permanent', JSON.stringify(result));
      assert.match(result.kind === 'permanent' ? result.reason : '', /^not answered within 2 s \(it rang\)$/);
      assert.ok(performance.now() - started >= 1_900, 'it rang for the ring time');
      assert.equal(await sippEnded(sipp.exited, 10_000), 0, `SIPp expected our CANCEL: ${sipp.errors()}`);
      await provider.stop();
    } finally {
      sipp.stop();
    }
  });
});
