import { promises as dns } from 'node:dns';
import net from 'node:net';
import { nameAllowed, noAllowedNetworks, refusedAddressReason, type AllowedNetworks } from './allowed-networks.js';

/**
 * Refuses webhook destinations that are not on the public internet (contract 4): the host is resolved, every
 * address checked, and the caller connects only to the addresses that passed, so DNS rebinding cannot slip past.
 */

/** An address a hostname resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a hostname to all its addresses (injected in tests: there is no DNS to rely on). */
export type LookupAll = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemLookup: LookupAll = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export type GuardResult =
  | { readonly ok: true; readonly addresses: readonly ResolvedAddress[] }
  | { readonly ok: false; readonly reason: string };

/**
 * Resolves and checks destinations; with `allowPrivate` (development) it only resolves. `allowed`
 * (WEBHOOK_ALLOWED_NETWORKS) lets those private ranges and names through, and no others.
 */
export class AddressGuard {
  constructor(
    private readonly allowPrivate: boolean,
    private readonly lookup: LookupAll = systemLookup,
    private readonly allowed: AllowedNetworks = noAllowedNetworks,
  ) {}

  async check(host: string): Promise<GuardResult> {
    const hostname = host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
    const family = net.isIP(hostname);
    if (family !== 0) {
      const literal: ResolvedAddress = { address: hostname, family: family === 6 ? 6 : 4 };
      return this.checkAll([literal]);
    }
    const byName = nameAllowed(this.allowed, hostname);
    if (!this.allowPrivate && !byName && isLoopbackName(hostname)) {
      return { ok: false, reason: `destination refused: ${hostname} is a loopback name` };
    }
    const addresses = await this.lookup(hostname);
    if (addresses.length === 0) return { ok: false, reason: `no address found for ${hostname}` };
    // A name the operator allowed goes wherever it resolves (a service's name inside the network).
    if (byName) return { ok: true, addresses };
    return this.checkAll(addresses, hostname);
  }

  private checkAll(addresses: readonly ResolvedAddress[], hostname?: string): GuardResult {
    if (this.allowPrivate) return { ok: true, addresses };
    for (const a of addresses) {
      const reason = refusedAddressReason(this.allowed, a.address);
      if (reason !== null) {
        const what = hostname ? `${hostname} resolves to ${a.address}` : a.address;
        return { ok: false, reason: `destination refused: ${what} is ${reason}` };
      }
    }
    return { ok: true, addresses };
  }
}

/** localhost and the names under it, which resolve to this machine whatever DNS says (RFC 6761). */
export function isLoopbackName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}
