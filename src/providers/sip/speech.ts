import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseWav, resample } from './wav.js';

/**
 * The audio of a SIP voice call (contract 13): the code read digit by digit, VOICE_REPEAT times, as 8 kHz PCM. Each
 * locale's clips (an introduction, "Your code is", and the ten digits) are made once and kept: by the operator's
 * recordings in VOICE_PROMPTS_DIR/<locale>/ (`0.wav` ... `9.wav`, and `intro.wav` if wanted), else synthesised on
 * this machine with espeak-ng. A call then only joins clips: no synthesiser per call, nor per digit.
 */

/** The telephone's sample rate. */
export const callRate = 8000;

/** One locale's clips, 8 kHz. */
export interface Clips {
  /** "Your code is"; null when the operator's prompts have none. */
  readonly intro: Int16Array | null;
  /** "zero" ... "nine". */
  readonly digits: readonly Int16Array[];
}

/** Makes a WAV of `text` spoken in `voice` (espeak-ng's voice name). */
export type Synthesizer = (voice: string, text: string) => Promise<Buffer>;

/** espeak-ng writing WAV to its stdout (Debian's `espeak-ng` package). */
export const espeakNg: Synthesizer = (voice, text) =>
  new Promise((resolve, reject) => {
    execFile('espeak-ng', ['-v', voice, '--stdout', text], { encoding: 'buffer', timeout: 10_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      if (err) reject(new Error(`espeak-ng -v ${voice} failed: ${err.message}`));
      else resolve(stdout);
    });
  });

/** Pauses, in 8 kHz samples: after the introduction, between digits (the comma), between readings. */
const gaps = { intro: 0.3 * callRate, digit: 0.35 * callRate, reading: 1.0 * callRate } as const;

/** Samples at most this loud at a clip's ends are the synthesiser's own silence, trimmed so that gaps are ours. */
const quiet = 64;

function trimmed(samples: Int16Array): Int16Array {
  let start = 0;
  let end = samples.length;
  while (start < end && Math.abs(samples[start] ?? 0) <= quiet) start++;
  while (end > start && Math.abs(samples[end - 1] ?? 0) <= quiet) end--;
  return samples.subarray(start, end);
}

/** espeak-ng's voice for a BCP 47 language (`pt-BR` -> `pt-br`, `en` -> `en-us`, `fr-CA` -> `fr`). */
export function espeakVoice(language: string): string {
  const [base = 'en', region = ''] = language.toLowerCase().split('-');
  if (base === 'pt' && region === 'br') return 'pt-br';
  if (base === 'en') return region === 'gb' ? 'en' : 'en-us';
  return base;
}

export class SpokenPrompts {
  private readonly clips = new Map<string, Promise<Clips>>();

  constructor(
    /** VOICE_PROMPTS_DIR, or null. */
    private readonly promptsDir: string | null,
    /** The sentence's introduction per language (src/domain/spoken-code.ts). */
    private readonly introduction: (language: string) => string,
    private readonly synthesize: Synthesizer = espeakNg,
  ) {}

  /** The whole call's audio: [intro] d, d, d ... VOICE_REPEAT times, 8 kHz. */
  async audio(language: string, code: string, repeat: number): Promise<Int16Array> {
    const clips = await this.clipsFor(language);
    const parts: (Int16Array | number)[] = [];
    for (let r = 0; r < repeat; r++) {
      if (r > 0) parts.push(gaps.reading);
      if (clips.intro) parts.push(clips.intro, gaps.intro);
      [...code].forEach((digit, i) => {
        if (i > 0) parts.push(gaps.digit);
        const clip = clips.digits[Number(digit)];
        if (clip) parts.push(clip);
      });
    }
    const length = parts.reduce<number>((n, p) => n + (typeof p === 'number' ? Math.round(p) : p.length), 0);
    const out = new Int16Array(length);
    let at = 0;
    for (const part of parts) {
      if (typeof part === 'number') at += Math.round(part);
      else {
        out.set(part, at);
        at += part.length;
      }
    }
    return out;
  }

  /** A locale's clips, made once (a failure is not kept: the next call tries again). */
  clipsFor(language: string): Promise<Clips> {
    const known = this.clips.get(language);
    if (known) return known;
    const making = this.make(language);
    this.clips.set(language, making);
    making.catch(() => this.clips.delete(language));
    return making;
  }

  private async make(language: string): Promise<Clips> {
    const recorded = await this.recorded(language);
    if (recorded) return recorded;
    const voice = espeakVoice(language);
    const clip = async (text: string) => trimmed(resample(parseWav(await this.synthesize(voice, text)), callRate));
    const [intro, ...digits] = await Promise.all([clip(this.introduction(language)), ...Array.from({ length: 10 }, (_, d) => clip(String(d)))]);
    return { intro: intro ?? null, digits };
  }

  /** The operator's recordings for the locale (`fr-CA`, then `fr`), when its folder holds all ten digits. */
  private async recorded(language: string): Promise<Clips | null> {
    if (this.promptsDir === null) return null;
    for (const name of [language, language.split('-')[0] ?? language]) {
      const dir = path.join(this.promptsDir, path.basename(name));
      const read = async (file: string) => resample(parseWav(await fs.readFile(path.join(dir, file))), callRate);
      try {
        const digits = await Promise.all(Array.from({ length: 10 }, (_, d) => read(`${d}.wav`)));
        const intro = await read('intro.wav').catch(() => null);
        return { intro, digits };
      } catch {
        // Not there, or not all of it: the next name, then the synthesiser.
      }
    }
    return null;
  }
}
