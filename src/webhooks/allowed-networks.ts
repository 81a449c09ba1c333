import net from 'node:net';
import { inCidr, nonPublicReason, parseCidr, type Cidr } from './ip-ranges.js';

/**
 * WEBHOOK_ALLOWED_NETWORKS: the private destinations a deployment inside a private network delivers webhooks to,
 * as CIDR ranges (10.20.0.0/16, fd00::/8, a single address) and host names (hooks.internal: exactly that name,
 * whatever it resolves to; .svc.cluster.local: every name under it). Every other non-public address stays refused.
 */
export interface AllowedNetworks {
  readonly ranges: readonly Cidr[];
  /** Exact names, lower case, without a trailing dot. */
  readonly names: readonly string[];
  /** Suffixes (given with a leading dot): a name ending with one is allowed. */
  readonly suffixes: readonly string[];
}

export const noAllowedNetworks: AllowedNetworks = { ranges: [], names: [], suffixes: [] };

const hostLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Parses the setting; throws naming the first entry that is neither a range nor a host name. */
export function parseAllowedNetworks(raw: string): AllowedNetworks {
  const ranges: Cidr[] = [];
  const names: string[] = [];
  const suffixes: string[] = [];
  for (const entry of raw.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean)) {
    const [address = '', bits] = entry.split('/');
    if (net.isIP(address) !== 0) {
      const cidr = parseCidr(address, bits);
      if (!cidr) throw new Error(`"${entry}" is not a CIDR range (the prefix length must fit the address)`);
      ranges.push(cidr);
      continue;
    }
    const name = entry.replace(/\.$/, '');
    const suffix = name.startsWith('.');
    const labels = (suffix ? name.slice(1) : name).split('.');
    if (name.includes('/') || labels.some((l) => !hostLabel.test(l))) {
      throw new Error(`"${entry}" is neither a CIDR range (10.0.0.0/8) nor a host name (hooks.internal, or .svc.cluster.local for every name under it)`);
    }
    (suffix ? suffixes : names).push(name);
  }
  return { ranges, names, suffixes };
}

/** Whether a host name (lower case, no trailing dot) is allowed by name, whatever it resolves to. */
export function nameAllowed(allowed: AllowedNetworks, hostname: string): boolean {
  return allowed.names.includes(hostname) || allowed.suffixes.some((s) => hostname.endsWith(s));
}

/** Why an address may not be delivered to, or null: public, or inside an allowed range. */
export function refusedAddressReason(allowed: AllowedNetworks, ip: string): string | null {
  const reason = nonPublicReason(ip);
  if (reason === null) return null;
  return allowed.ranges.some((r) => inCidr(ip, r)) ? null : reason;
}
