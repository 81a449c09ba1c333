import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { voiceIntroduction } from '../../src/domain/spoken-code.js';
import { aLaw, decodeG711, encodeG711, muLaw } from '../../src/providers/sip/g711.js';
import { parseMediaAnswer } from '../../src/providers/sip/sdp.js';
import { espeakVoice, SpokenPrompts, type Synthesizer } from '../../src/providers/sip/speech.js';
import { parseWav, resample } from '../../src/providers/sip/wav.js';

/** A 16-bit PCM mono WAV of `samples` at `rate`, as an operator's recording would be. */
function wav(samples: Int16Array, rate: number): Buffer {
  const data = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => data.writeInt16LE(s, i * 2));
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

const tone = (length: number, level: number) => Int16Array.from({ length }, (_, i) => Math.round(level * Math.sin(i / 3)));

describe('G.711', () => {
  it('encodes as the G.711 tables do (values of Sun\'s reference g711.c)', () => {
    assert.deepEqual([0, 1000, -1000, 32767, -32768, 8159 * 4].map(muLaw), [0xff, 0xce, 0x4e, 0x80, 0x00, 0x80]);
    assert.deepEqual([0, 1000, -1000, 32767, -32768].map(aLaw), [0xd5, 0xfa, 0x7a, 0xaa, 0x2a]);
  });
  it('decodes back within the quantisation step', () => {
    const samples = Int16Array.from({ length: 200 }, (_, i) => (i - 100) * 300);
    for (const codec of ['PCMU', 'PCMA'] as const) {
      const back = decodeG711(encodeG711(samples, codec), codec);
      samples.forEach((s, i) => assert.ok(Math.abs((back[i] ?? 0) - s) <= Math.max(64, Math.abs(s) / 8), `${codec} ${s} -> ${back[i]}`));
    }
  });
});

describe('SDP answer', () => {
  it('reads the audio address, port and first G.711 format, media level before session level', () => {
    const answer = ['v=0', 'o=- 1 1 IN IP4 10.0.0.1', 's=-', 'c=IN IP4 10.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 8 0 101', 'c=IN IP4 10.0.0.2', 'a=rtpmap:8 PCMA/8000', ''].join('\r\n');
    assert.deepEqual(parseMediaAnswer(answer), { address: '10.0.0.2', port: 40000, codec: 'PCMA', payloadType: 8 });
    assert.deepEqual(parseMediaAnswer('v=0\nc=IN IP4 192.0.2.7\nm=audio 5004 RTP/AVP 0\n'), { address: '192.0.2.7', port: 5004, codec: 'PCMU', payloadType: 0 });
  });
  it('gives null for a refused stream, no G.711, a hold address, or no audio', () => {
    assert.equal(parseMediaAnswer('v=0\nc=IN IP4 192.0.2.7\nm=audio 0 RTP/AVP 0\n'), null);
    assert.equal(parseMediaAnswer('v=0\nc=IN IP4 192.0.2.7\nm=audio 5004 RTP/AVP 18\n'), null);
    assert.equal(parseMediaAnswer('v=0\nc=IN IP4 0.0.0.0\nm=audio 5004 RTP/AVP 0\n'), null);
    assert.equal(parseMediaAnswer('v=0\nc=IN IP4 192.0.2.7\nm=video 5004 RTP/AVP 96\n'), null);
  });
});

describe('spoken prompts', () => {
  it('reads WAV and resamples to 8 kHz', () => {
    const pcm = parseWav(wav(tone(22_050, 8000), 22_050));
    assert.equal(pcm.rate, 22_050);
    assert.equal(resample(pcm, 8000).length, 8000);
    assert.throws(() => parseWav(Buffer.from('not a wav file at all')), /not a WAV/);
  });

  it('synthesises each locale\'s clips once (eleven clips), never per call or per digit', async () => {
    const asked: string[] = [];
    const fake: Synthesizer = async (voice, text) => {
      asked.push(`${voice}:${text}`);
      return wav(tone(2205, 4000), 22_050);
    };
    const prompts = new SpokenPrompts(null, voiceIntroduction, fake);
    const first = await prompts.audio('pt-BR', '4129', 3);
    const second = await prompts.audio('pt-BR', '0000', 1);
    assert.equal(asked.length, 11);
    assert.ok(asked.includes('pt-br:Seu código é') && asked.includes('pt-br:7'));
    assert.ok(first.length > second.length);
    assert.equal(espeakVoice('en'), 'en-us');
    assert.equal(espeakVoice('fr-CA'), 'fr');
  });

  it("plays the operator's recordings from VOICE_PROMPTS_DIR/<locale>/ (the language's folder for a regional locale)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prompts-'));
    try {
      fs.mkdirSync(path.join(dir, 'fr'));
      for (let d = 0; d < 10; d++) fs.writeFileSync(path.join(dir, 'fr', `${d}.wav`), wav(tone(800 + d * 80, 3000), 8000));
      const never: Synthesizer = async () => {
        throw new Error('the recordings are there: nothing is synthesised');
      };
      const audio = await new SpokenPrompts(dir, voiceIntroduction, never).audio('fr-CA', '19', 1);
      // "1", a comma's pause (0.35 s), "9"; no intro.wav, so no introduction.
      assert.equal(audio.length, 880 + 0.35 * 8000 + 1520);
      await assert.rejects(new SpokenPrompts(dir, voiceIntroduction, never).audio('de', '1', 1), /nothing is synthesised/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
