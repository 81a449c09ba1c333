import net from 'node:net';

/** Address ranges: which addresses are not on the public internet (IANA's special-purpose registries), and CIDR ranges. */

/** A range of addresses: the first `bits` bits of `bytes` (4 bytes for IPv4, 16 for IPv6). */
export interface Cidr {
  readonly bytes: readonly number[];
  readonly bits: number;
}

interface Range extends Cidr {
  readonly reason: string;
}

/** A range from an address and its prefix length (absent: the one address); null when the length does not fit. */
export function parseCidr(address: string, bits: string | undefined): Cidr | null {
  const bytes = parseIPv4(address) ?? parseIPv6(address);
  if (!bytes) return null;
  const max = bytes.length * 8;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return null;
  const length = bits === undefined ? max : Number(bits);
  return length <= max ? { bytes, bits: length } : null;
}

/** Whether `ip` is inside `range`; an IPv4 address written as IPv6 (::ffff:10.0.0.1) counts as its IPv4 self. */
export function inCidr(ip: string, range: Cidr): boolean {
  const address = ip.replace(/%.*$/, '');
  const four = parseIPv4(address);
  const six = four ? null : parseIPv6(address);
  const bytes = four ?? (six && range.bytes.length === 4 ? (embeddedIPv4(six)?.ipv4 ?? six) : six);
  return bytes !== null && inRange(bytes, range);
}

const v4 = (cidr: string, reason: string): Range => {
  const [address = '', bits = '32'] = cidr.split('/');
  return { bytes: parseIPv4(address) ?? [], bits: Number(bits), reason };
};
const v6 = (cidr: string, reason: string): Range => {
  const [address = '', bits = '128'] = cidr.split('/');
  return { bytes: parseIPv6(address) ?? [], bits: Number(bits), reason };
};

/** IPv4 ranges that are not public unicast (IANA special-purpose registry). */
const ipv4Ranges: readonly Range[] = [
  v4('0.0.0.0/8', '"this network" (0.0.0.0/8)'),
  v4('10.0.0.0/8', 'a private address'),
  v4('100.64.0.0/10', 'a carrier-grade NAT address'),
  v4('127.0.0.0/8', 'a loopback address'),
  v4('169.254.0.0/16', 'a link-local address'),
  v4('172.16.0.0/12', 'a private address'),
  v4('192.0.0.0/24', 'a reserved address (IETF protocol assignments)'),
  v4('192.0.2.0/24', 'a documentation address'),
  v4('192.88.99.0/24', 'a reserved address (6to4 relay)'),
  v4('192.168.0.0/16', 'a private address'),
  v4('198.18.0.0/15', 'a reserved address (benchmarking)'),
  v4('198.51.100.0/24', 'a documentation address'),
  v4('203.0.113.0/24', 'a documentation address'),
  v4('224.0.0.0/4', 'a multicast address'),
  v4('240.0.0.0/4', 'a reserved address'),
];

/** IPv6 ranges inside global unicast (2000::/3) that are still not public; all else outside 2000::/3 is refused. */
const ipv6Ranges: readonly Range[] = [
  v6('2001::/23', 'a reserved address (IETF protocol assignments)'),
  v6('2001:db8::/32', 'a documentation address'),
  v6('3fff::/20', 'a documentation address'),
];

/** Why `ip` is not a public unicast address (e.g. "a loopback address"), or null when it is public. */
export function nonPublicReason(ip: string): string | null {
  const address = ip.replace(/%.*$/, '');
  const four = parseIPv4(address);
  if (four) return ipv4Reason(four);
  const six = parseIPv6(address);
  if (!six) return 'not an IP address';
  const embedded = embeddedIPv4(six);
  if (embedded) {
    const reason = ipv4Reason(embedded.ipv4);
    return reason === null ? null : `${reason} (${embedded.via})`;
  }
  if (six.every((b) => b === 0)) return 'the unspecified address';
  if (six.slice(0, 15).every((b) => b === 0) && six[15] === 1) return 'a loopback address';
  const first = six[0] ?? 0;
  if (first === 0xff) return 'a multicast address';
  if (first === 0xfe && ((six[1] ?? 0) & 0xc0) === 0x80) return 'a link-local address';
  if (first === 0xfe && ((six[1] ?? 0) & 0xc0) === 0xc0) return 'a site-local address';
  if ((first & 0xfe) === 0xfc) return 'a private (unique local) address';
  if ((first & 0xe0) !== 0x20) return 'a reserved address';
  return rangeReason(six, ipv6Ranges);
}

function ipv4Reason(bytes: readonly number[]): string | null {
  return rangeReason(bytes, ipv4Ranges);
}

function rangeReason(bytes: readonly number[], ranges: readonly Range[]): string | null {
  return ranges.find((r) => inRange(bytes, r))?.reason ?? null;
}

function inRange(bytes: readonly number[], range: Cidr): boolean {
  if (range.bytes.length !== bytes.length) return false;
  for (let bit = 0; bit < range.bits; bit += 8) {
    const left = Math.min(8, range.bits - bit);
    const mask = (0xff << (8 - left)) & 0xff;
    const i = bit / 8;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address. */
function embeddedIPv4(six: readonly number[]): { ipv4: number[]; via: string } | null {
  const zeros = (from: number, to: number) => six.slice(from, to).every((b) => b === 0);
  if (zeros(0, 10) && six[10] === 0xff && six[11] === 0xff) return { ipv4: six.slice(12), via: 'IPv4-mapped' };
  // ::a.b.c.d (deprecated IPv4-compatible); :: and ::1 themselves are handled by the caller
  if (zeros(0, 12) && !zeros(12, 15)) return { ipv4: six.slice(12), via: 'IPv4-compatible' };
  if (six[0] === 0x00 && six[1] === 0x64 && six[2] === 0xff && six[3] === 0x9b && zeros(4, 12)) {
    return { ipv4: six.slice(12), via: 'NAT64' };
  }
  if (six[0] === 0x20 && six[1] === 0x02) return { ipv4: six.slice(2, 6), via: '6to4' };
  return null;
}

function parseIPv4(text: string): number[] | null {
  if (!net.isIPv4(text)) return null;
  return text.split('.').map(Number);
}

function parseIPv6(text: string): number[] | null {
  if (!net.isIPv6(text)) return null;
  let rest = text;
  let tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(rest);
  if (dotted?.[1]) {
    tail = parseIPv4(dotted[1]) ?? [];
    rest = rest.slice(0, -dotted[1].length);
    if (rest.endsWith(':') && !rest.endsWith('::')) rest = rest.slice(0, -1);
  }
  const [head = '', after] = rest.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = after === undefined ? [] : groups(after);
  const missing = 8 - tail.length / 2 - left.length - right.length;
  const all = [...left, ...Array<number>(after === undefined ? 0 : missing).fill(0), ...right];
  const bytes = all.flatMap((g) => [(g >> 8) & 0xff, g & 0xff]);
  return [...bytes, ...tail];
}
