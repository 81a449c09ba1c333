import { parsePhone } from '../../src/domain/phone.js';

/** Nigerian mobile prefixes (+234 80X) that libphonenumber's metadata accepts. */
const prefixes = ['0802', '0803', '0805', '0806', '0807', '0808', '0809'];
const perPrefix = 10_000_000;

/**
 * Distinct valid local numbers (+234, 080X + 7 digits), one per call, so the per-phone limit index sees a
 * new number on every create. `offset` keeps separate sequences apart.
 */
export class PhoneSequence {
  private next: number;

  constructor(offset = 0) {
    this.next = offset;
  }

  /** The n-th number of the sequence in local format, e.g. 08031234567. */
  static local(n: number): string {
    const prefix = prefixes[n % prefixes.length] ?? '0803';
    // Scrambled (7919 is prime to 10^7, so this is a bijection): consecutive numbers fall in different ranges of
    // 1000, as ordinary users' do, rather than walking one range as SMS pumping does (contract 10's prefix velocity).
    return prefix + String((Math.floor(n / prefixes.length) * 7919) % perPrefix).padStart(7, '0');
  }

  /** The n-th number in E.164, e.g. +2348031234567. */
  static e164(n: number): string {
    return `+234${PhoneSequence.local(n).slice(1)}`;
  }

  take(): string {
    return PhoneSequence.local(this.next++);
  }
}

/** Checks a sample of the sequence with the service's own parser, so a bad prefix fails fast. */
export function checkPhoneSequence(samples = 500): void {
  for (let i = 0; i < samples; i++) {
    const n = i * 7919 + 13;
    const parsed = parsePhone('+234', PhoneSequence.local(n));
    if (!parsed || parsed.e164 !== PhoneSequence.e164(n)) {
      throw new Error(`bench phone number ${PhoneSequence.local(n)} is not valid for +234`);
    }
  }
}
