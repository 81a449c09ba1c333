import net from 'node:net';
import { webhookUrlProblem } from '../domain/webhook-url.js';
import { isLoopbackName } from './address-guard.js';
import { nameAllowed, refusedAddressReason, type AllowedNetworks } from './allowed-networks.js';
import { nonPublicReason } from './ip-ranges.js';

/** Where webhooks may go, as the settings say; the same rules the delivery's address guard applies. */
export interface WebhookDestinations {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS (development): anywhere. */
  readonly allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_NETWORKS. */
  readonly allowed: AllowedNetworks;
  /** NODE_ENV=production: `http:` only to a destination `allowed` names (its name, or its address in a range). */
  readonly httpsOnly: boolean;
}

/** The destinations the settings allow. */
export function webhookDestinations(config: {
  readonly NODE_ENV: string;
  readonly WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean;
  readonly WEBHOOK_ALLOWED_NETWORKS: AllowedNetworks;
}): WebhookDestinations {
  return { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS, allowed: config.WEBHOOK_ALLOWED_NETWORKS, httpsOnly: config.NODE_ENV === 'production' };
}

/**
 * Why a webhook URL can never be delivered to, or null: checked when a create or a client's default names it,
 * so that the caller hears it at once rather than the event being retried for a day. A host name is not
 * resolved here (it may change, and a create does not wait on DNS): its addresses are checked at each delivery.
 */
export function webhookDestinationProblem(raw: string, destinations: WebhookDestinations): string | null {
  const syntax = webhookUrlProblem(raw);
  if (syntax || destinations.allowPrivate) return syntax;
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  if (nameAllowed(destinations.allowed, host)) return null;
  if (net.isIP(host) !== 0) {
    const refused = refusedAddressReason(destinations.allowed, host);
    if (refused) return `must not point to ${refused} (${host}) unless WEBHOOK_ALLOWED_NETWORKS lists its network`;
    // A private address the operator allowed is inside their network: http is theirs to choose there.
    if (nonPublicReason(host) !== null) return null;
  } else if (isLoopbackName(host)) {
    return `must not point to this machine (${host})`;
  }
  if (destinations.httpsOnly && url.protocol === 'http:') {
    return 'must use https: http is taken only for a destination inside the network WEBHOOK_ALLOWED_NETWORKS names';
  }
  return null;
}
