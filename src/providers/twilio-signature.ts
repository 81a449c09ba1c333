import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Twilio's `X-Twilio-Signature` over a form-encoded request: base64(HMAC-SHA1(auth token, URL followed by each
 * POST parameter's name and value, ordered by name)). A name sent more than once contributes each distinct value
 * once, in sorted order, as Twilio's own helpers (twilio-node `getExpectedTwilioSignature`) do.
 * https://www.twilio.com/docs/usage/webhooks/webhooks-security
 */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const byName = new Map<string, string[]>();
  for (const [name, value] of params) byName.set(name, [...(byName.get(name) ?? []), value]);
  let data = url;
  for (const name of [...byName.keys()].sort()) {
    for (const value of [...new Set(byName.get(name))].sort()) data += name + value;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * True when `signature` is Twilio's for this URL and form. Twilio documents that the port may or may not be part
 * of the URL it signed (it can differ from the URL it called), so both the URL without its port and with the
 * scheme's default port are tried, as its own checker (`validateRequest`) does.
 */
export function isTwilioSignatureValid(authToken: string, signature: string, url: string, params: URLSearchParams): boolean {
  const given = Buffer.from(signature, 'utf8');
  let valid = false;
  for (const candidate of new Set([withoutPort(url), withDefaultPort(url)])) {
    const expected = Buffer.from(twilioSignature(authToken, candidate, params), 'utf8');
    // Every candidate is compared, so the time taken does not say which one (nor how much of it) matched.
    if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true;
  }
  return valid;
}

interface UrlParts {
  readonly scheme: string;
  readonly userInfo: string;
  readonly host: string;
  readonly port: string;
  readonly rest: string;
}

/** Splits a URL without normalising it: Twilio signed the exact characters it called, not `new URL()`'s form of them. */
function splitUrl(url: string): UrlParts | null {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return null;
  const [prefix, scheme = '', authority = ''] = match;
  const userInfoEnd = authority.lastIndexOf('@');
  const hostAndPort = authority.slice(userInfoEnd + 1);
  // In an IPv6 literal the port's colon comes after the closing bracket.
  const portStart = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
  return {
    scheme,
    userInfo: authority.slice(0, userInfoEnd + 1),
    host: portStart === -1 ? hostAndPort : hostAndPort.slice(0, portStart),
    port: portStart === -1 ? '' : hostAndPort.slice(portStart),
    rest: url.slice(prefix.length),
  };
}

function withoutPort(url: string): string {
  const parts = splitUrl(url);
  return parts ? parts.scheme + parts.userInfo + parts.host + parts.rest : url;
}

function withDefaultPort(url: string): string {
  const parts = splitUrl(url);
  if (!parts || parts.port) return url;
  const port = parts.scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  return parts.scheme + parts.userInfo + parts.host + port + parts.rest;
}
