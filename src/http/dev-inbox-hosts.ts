import { isLoopback } from '../config.js';

/**
 * The hosts the development inbox answers on. It shows codes to anyone who can read it, and has no login: a web
 * page on another site can still reach it through DNS rebinding (its own name made to resolve to 127.0.0.1, so
 * the browser sends that name as Host and lets the page read the answer). Checking Host defeats that: the
 * browser always sends the name the page used, and only loopback names and the service's own are accepted.
 */

/**
 * Besides loopback, the host of PUBLIC_BASE_URL and the address the server is bound to (unless that is a
 * wildcard, which names no host), lower case, IPv6 in brackets, as a Host header carries them.
 */
export function inboxHosts(publicBaseUrl: string | null, listenHost: string): string[] {
  const hosts: string[] = [];
  if (publicBaseUrl !== null && URL.canParse(publicBaseUrl)) hosts.push(new URL(publicBaseUrl).hostname.replace(/\.$/, ''));
  if (listenHost !== '0.0.0.0' && listenHost !== '::') {
    const host = hostnameOf(listenHost.includes(':') && !listenHost.startsWith('[') ? `[${listenHost}]` : listenHost);
    if (host !== null) hosts.push(host);
  }
  return hosts;
}

/** Whether a request's Host header (name or address, port or not) names loopback or one of `hosts`. */
export function inboxHostAllowed(hostHeader: string | undefined, hosts: readonly string[]): boolean {
  if (hostHeader === undefined) return false;
  const host = hostnameOf(hostHeader);
  if (host === null) return false;
  return isLoopback(host.startsWith('[') ? host.slice(1, -1) : host) || hosts.includes(host);
}

/**
 * The host of `host[:port]` as the WHATWG URL parser reads it: lower case, no trailing dot, IPv4 in dotted
 * decimal (127.1 reads 127.0.0.1), IPv6 compressed in brackets; null for anything a browser would not send.
 */
function hostnameOf(authority: string): string | null {
  if (!/^[A-Za-z0-9.\-:[\]]+$/.test(authority)) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${authority}/`).hostname;
  } catch {
    return null;
  }
  return hostname.replace(/\.$/, '');
}
