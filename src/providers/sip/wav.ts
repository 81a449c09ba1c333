/**
 * Just enough of RIFF WAVE to read what espeak-ng writes and what an operator records: 16-bit linear PCM, mono,
 * any sample rate; then resampled to the 8 kHz of a telephone call.
 */

/** 16-bit samples and their rate. */
export interface Pcm {
  readonly samples: Int16Array;
  readonly rate: number;
}

/**
 * Reads a WAV file's `fmt ` and `data` chunks. espeak-ng writing to a pipe cannot know the data's length and
 * declares 0x7ffff000 or so: the data then runs to the end of the file.
 */
export function parseWav(file: Buffer): Pcm {
  if (file.length < 12 || file.toString('ascii', 0, 4) !== 'RIFF' || file.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let offset = 12;
  let format: { channels: number; rate: number; bits: number; tag: number } | null = null;
  while (offset + 8 <= file.length) {
    const id = file.toString('ascii', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = { tag: file.readUInt16LE(body), channels: file.readUInt16LE(body + 2), rate: file.readUInt32LE(body + 4), bits: file.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!format) throw new Error('WAV data before its format');
      if (format.tag !== 1 || format.bits !== 16 || format.channels !== 1) throw new Error('expected 16-bit PCM mono WAV');
      const end = Math.min(file.length, body + size) & ~1;
      const samples = new Int16Array(Math.max(0, (end - body) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = file.readInt16LE(body + i * 2);
      return { samples, rate: format.rate };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAV file without data');
}

/** Half the width of the resampling filter, in input samples. */
const taps = 16;

/**
 * Resamples to `rate` with a windowed-sinc low-pass (cut-off just under the lower Nyquist frequency), so that the
 * 22 kHz of espeak-ng becomes 8 kHz without aliasing; deterministic, so one input always gives the same audio.
 */
export function resample(pcm: Pcm, rate: number): Int16Array {
  if (pcm.rate === rate) return pcm.samples;
  const ratio = pcm.rate / rate;
  const cutoff = 0.9 * Math.min(1, rate / pcm.rate) * 0.5;
  const out = new Int16Array(Math.floor(pcm.samples.length / ratio));
  const width = Math.ceil(taps * Math.max(1, ratio));
  for (let n = 0; n < out.length; n++) {
    const centre = n * ratio;
    let sum = 0;
    let weights = 0;
    for (let k = Math.ceil(centre - width); k <= Math.floor(centre + width); k++) {
      if (k < 0 || k >= pcm.samples.length) continue;
      const x = k - centre;
      const sinc = x === 0 ? 1 : Math.sin(2 * Math.PI * cutoff * x) / (2 * Math.PI * cutoff * x);
      const window = 0.5 + 0.5 * Math.cos((Math.PI * x) / (width + 1));
      const w = sinc * window;
      sum += (pcm.samples[k] ?? 0) * w;
      weights += w;
    }
    out[n] = Math.max(-32768, Math.min(32767, Math.round(weights === 0 ? 0 : sum / weights)));
  }
  return out;
}
