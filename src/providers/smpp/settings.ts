import type { ProviderSetting } from '../../channels/provider-port.js';

/** Where and as whom to bind, from SMPP_URL. */
export interface SmppEndpoint {
  readonly tls: boolean;
  readonly host: string;
  readonly port: number;
  readonly systemId: string;
  readonly password: string;
}

/** Printable ASCII, as C-Octet Strings carry it. */
const PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * Parses `smpp://system_id:password@host:port` (`ssmpp://` for TLS; ports default to 2775 and 3550).
 * Error messages never repeat the value: it holds the password.
 */
export function parseSmppUrl(raw: string): SmppEndpoint {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error('expected smpp://system_id:password@host:port (or ssmpp:// for TLS), got something that is not a URL');
  }
  const tls = url.protocol === 'ssmpp:';
  if (!tls && url.protocol !== 'smpp:') throw new Error(`expected the scheme smpp:// or ssmpp://, got ${url.protocol}//`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new Error('SMPP_URL names no host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
    throw new Error('SMPP_URL takes no path, query or fragment');
  }
  const decode = (part: string, what: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new Error(`the ${what} in SMPP_URL is not valid percent-encoding`);
    }
  };
  const systemId = decode(url.username, 'system_id');
  const password = decode(url.password, 'password');
  if (!systemId) throw new Error('SMPP_URL names no system_id (smpp://system_id:password@host:port)');
  // SMPP 3.4 allows 15 and 8 characters; some SMSCs take more, so only the alphabet is checked.
  if (!PRINTABLE.test(systemId) || !PRINTABLE.test(password)) {
    throw new Error('the system_id and password in SMPP_URL must be printable ASCII');
  }
  const port = url.port ? Number(url.port) : tls ? 3550 : 2775;
  return { tls, host, port, systemId, password };
}

const wholeNumber = (min: number, max: number) => (raw: string): number => {
  if (!/^\d+$/.test(raw.trim())) throw new Error(`expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new Error(`expected a number from ${min} to ${max}, got ${value}`);
  return value;
};

/** The smpp provider's settings (CONTRACT.md section 8). */
export const smppSettings = {
  SMPP_URL: {
    doc: 'The SMSC to bind to as a transceiver: smpp://system_id:password@host:port, or ssmpp:// for TLS.',
    default: undefined,
    required: true,
    secret: true,
    parse: parseSmppUrl,
  } satisfies ProviderSetting<SmppEndpoint>,
  SMPP_WINDOW: {
    doc: 'At most this many submit_sm wait for their submit_sm_resp at once; further sends queue.',
    default: '10',
    required: false,
    parse: wholeNumber(1, 1000),
  } satisfies ProviderSetting<number>,
  SMPP_SYSTEM_TYPE: {
    doc: 'The system_type sent in bind_transceiver, when the SMSC asks for one (at most 12 characters).',
    default: '',
    required: false,
    parse: (raw: string): string => {
      if (raw.length > 12 || !PRINTABLE.test(raw)) throw new Error('expected at most 12 printable ASCII characters');
      return raw;
    },
  } satisfies ProviderSetting<string>,
  SMPP_ENQUIRE_LINK_SECONDS: {
    doc: 'Seconds between enquire_link PDUs that keep the bind alive and find a dead link.',
    default: '30',
    required: false,
    parse: wholeNumber(1, 3600),
  } satisfies ProviderSetting<number>,
};
