import { isIPv4, isIPv6 } from 'node:net';

/**
 * An end user's address as the limits compare it (contract 14): one spelling per address, so that
 * `::ffff:192.0.2.1` is the IPv4 `192.0.2.1` and every spelling of an IPv6 address is one key, with the network
 * its limit shares (the /24 of an IPv4 address, the /48 of an IPv6 one, where one site's addresses live).
 */
export interface CanonicalAddress {
  /** Dotted decimal for IPv4; RFC 5952 text (lower case, longest zero run as `::`) for IPv6. */
  readonly address: string;
  /** `a.b.c.0/24` or `x:y:z::/48`. */
  readonly network: string;
}

/** The address `text` names, or null when it is not IPv4 or IPv6 text. A zone (`%eth0`) names no other address. */
export function canonicalAddress(text: string): CanonicalAddress | null {
  if (isIPv4(text)) return ipv4(text.split('.').map(Number));
  const bare = text.split('%')[0] ?? '';
  if (!isIPv6(bare)) return null;
  const groups = hextets(bare.toLowerCase());
  if (groups === null) return null;
  // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address itself.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const hi = groups[6] ?? 0;
    const lo = groups[7] ?? 0;
    return ipv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  }
  return { address: rfc5952(groups), network: `${rfc5952([...groups.slice(0, 3), 0, 0, 0, 0, 0])}/48` };
}

function ipv4(octets: readonly number[]): CanonicalAddress {
  return { address: octets.join('.'), network: `${octets.slice(0, 3).join('.')}.0/24` };
}

/** The eight 16-bit groups of IPv6 text that isIPv6 accepted (an IPv4 tail is written as its two groups first). */
function hextets(text: string): number[] | null {
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  let body = text;
  if (last.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number);
    body = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const halves = body.split('::');
  let groups = parse(halves[0] ?? '');
  if (halves.length === 2) {
    const rest = parse(halves[1] ?? '');
    groups = [...groups, ...Array<number>(Math.max(0, 8 - groups.length - rest.length)).fill(0), ...rest];
  }
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** RFC 5952: lower-case hex without leading zeros, the longest run of two or more zero groups (the first) as `::`. */
function rfc5952(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
