import { isIP } from 'node:net';
import type { ProviderSetting } from '../../channels/provider-port.js';
import { parseOneOf } from '../http-provider.js';

/** Where calls go, from SIP_TRUNK_URI. */
export interface SipTrunk {
  /** A host name or an IP address (IPv6 without brackets). */
  readonly host: string;
  readonly port: number;
  readonly transport: 'udp' | 'tcp';
}

/** A host name as DNS writes it, or an IP address (IPv6 in brackets in a URI). */
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** A host in a SIP URI: a DNS name, an IPv4 address, or an IPv6 address (given without brackets). */
export function parseSipHost(raw: string): string {
  const host = raw.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) || HOSTNAME.test(host)) return host;
  throw new Error('expected a host name or an IP address');
}

/** How a host is written inside a SIP URI or header (an IPv6 address in brackets). */
export function uriHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * Parses `sip:host[:port][;transport=udp|tcp]` (port 5060 by default). No user part, no other parameters: the
 * trunk is a next hop, and the number dialled is written by the provider.
 */
export function parseTrunkUri(raw: string): SipTrunk {
  const m = /^sip:(\[[0-9A-Fa-f:.]+\]|[^:;[\]@]+)(?::(\d{1,5}))?((?:;[^;]*)*)$/.exec(raw.trim());
  if (!m?.[1]) {
    if (/^sips:/i.test(raw.trim())) throw new Error('sips: (TLS) is not supported; expected sip:host[:port][;transport=udp|tcp]');
    if (/@/.test(raw)) throw new Error('expected sip:host[:port][;transport=udp|tcp] without a user part (credentials go in SIP_USERNAME and SIP_PASSWORD)');
    throw new Error('expected sip:host[:port][;transport=udp|tcp], e.g. sip:trunk.example.com:5060;transport=tcp');
  }
  const host = parseSipHost(m[1]);
  const port = m[2] === undefined ? 5060 : Number(m[2]);
  if (port < 1 || port > 65535) throw new Error(`expected a port from 1 to 65535, got ${port}`);
  let transport: 'udp' | 'tcp' = 'udp';
  for (const param of (m[3] ?? '').split(';').slice(1)) {
    const [name = '', value = ''] = param.split('=');
    if (name.toLowerCase() !== 'transport') throw new Error(`unknown URI parameter "${name}"; only transport=udp or transport=tcp is read`);
    const chosen = value.toLowerCase();
    if (chosen !== 'udp' && chosen !== 'tcp') throw new Error(`transport must be udp or tcp, got "${value}"`);
    transport = chosen;
  }
  return { host, port, transport };
}

/** An address of this machine to bind: an IP address, not a name (a name could resolve to another host's). */
export function parseLocalAddress(raw: string): string {
  const address = raw.trim().replace(/^\[(.*)\]$/, '$1');
  if (!isIP(address)) throw new Error('expected an IP address of this machine, e.g. 10.0.0.5 or 0.0.0.0');
  return address;
}

function parsePort(raw: string): number {
  if (!/^\d{1,5}$/.test(raw.trim()) || Number(raw) > 65535) throw new Error(`expected a port from 0 to 65535, got "${raw}"`);
  return Number(raw);
}

/** The user part of a SIP URI (RFC 3261 section 25.1 unreserved and user-unreserved characters), for SIP_USERNAME. */
function parseUsername(raw: string): string {
  if (!/^[A-Za-z0-9\-_.!~*'()&=+$,;?/%]{1,128}$/.test(raw)) throw new Error('expected 1 to 128 characters allowed in a SIP user name (no spaces, quotes or @)');
  return raw;
}

/** A password sent only as a digest: any visible ASCII, never repeated in a message. */
function parsePassword(raw: string): string {
  if (!/^[\x20-\x7e]{1,256}$/.test(raw) || raw !== raw.trim()) throw new Error('expected 1 to 256 printable ASCII characters, without spaces around them');
  return raw;
}

/** The sip provider's settings (CONTRACT.md section 8). */
export const sipSettings = {
  SIP_TRUNK_URI: {
    doc: 'The SIP trunk dropped calls are placed through: sip:host[:port][;transport=udp|tcp] (port 5060 and UDP unless given).',
    default: undefined,
    required: true,
    parse: parseTrunkUri,
  } satisfies ProviderSetting<SipTrunk>,
  SIP_USERNAME: {
    doc: 'The user name for digest authentication when the trunk challenges an INVITE (401/407); unset: the trunk must accept us by address.',
    default: undefined,
    required: false,
    parse: parseUsername,
  } satisfies ProviderSetting<string>,
  SIP_PASSWORD: {
    doc: 'The password for digest authentication, with SIP_USERNAME; sent only as a digest.',
    default: undefined,
    required: false,
    secret: true,
    parse: parsePassword,
  } satisfies ProviderSetting<string>,
  SIP_LOCAL_ADDRESS: {
    doc: 'The address of this machine to send SIP from and write in Via and Contact; 0.0.0.0 binds every address and advertises the one the system routes to the trunk from.',
    default: '0.0.0.0',
    required: false,
    parse: parseLocalAddress,
  } satisfies ProviderSetting<string>,
  SIP_LOCAL_PORT: {
    doc: 'The UDP port to send from and receive answers on; 0 lets the system pick one (answers come back to it by rport). TCP always connects from a port the system picks.',
    default: '0',
    required: false,
    parse: parsePort,
  } satisfies ProviderSetting<number>,
  SIP_FROM_HOST: {
    doc: 'The host part of the From and P-Asserted-Identity URIs that carry the caller id (sip:+<caller id>@host); unset: the trunk\'s host.',
    default: undefined,
    required: false,
    parse: parseSipHost,
  } satisfies ProviderSetting<string>,
  SIP_NUMBER_FORMAT: {
    doc: 'How numbers are written in the user part of the Request-URI, To, From and P-Asserted-Identity: e164 (+2348012345678) or digits (2348012345678), as the trunk expects.',
    default: 'e164',
    required: false,
    parse: parseOneOf(['e164', 'digits'] as const),
  } satisfies ProviderSetting<'e164' | 'digits'>,
};
