import { accessSync, constants } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { channels, perChannel, type Channel } from './domain/channel-driver.js';
import { isLineType, lineTypes, type LineType } from './domain/line-type.js';
import { isCurrency } from './domain/money.js';
import { parseE164 } from './domain/phone.js';
import { parseCallerIdRanges, type CallerIdRange } from './providers/caller-id.js';
import { parseBaseUrl, parseHttpUrl, parseSecret } from './providers/http-provider.js';
import { providerModule, providerModules, type ConfiguredProvider } from './providers/registry.js';
import { parseDatabaseUrl } from './store/database-url.js';
import { parseAllowedNetworks } from './webhooks/allowed-networks.js';
import { carrierSettingsOf, type CarrierSettings } from './carrier/carrier-settings.js';

/** A setting the operator can give through the environment. */
interface Setting<T> {
  /** What the setting means, shown in `otp-service config` and the settings table (docs/settings.md). */
  readonly doc: string;
  /** The value used when the variable is absent or empty, as the operator would write it. */
  readonly default: string | undefined;
  readonly parse: (raw: string) => T;
}

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) => (raw: string): number => {
  if (!/^-?\d+$/.test(raw.trim())) throw new Error(`expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new Error(`expected a number from ${min} to ${max}, got ${value}`);
  return value;
};
const fraction = (raw: string): number => {
  if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(raw.trim())) throw new Error(`expected a fraction from 0 to 1, got "${raw}"`);
  return Number(raw);
};
const text = (raw: string): string => raw;
const bool = (raw: string): boolean => {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new Error(`expected true or false, got "${raw}"`);
};
const seconds = (raw: string): number[] => {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) {
    throw new Error(`expected comma-separated seconds, got "${raw}"`);
  }
  return parts.map(Number);
};
const oneOf = <T extends string>(...values: T[]) => (raw: string): T => {
  if (!(values as string[]).includes(raw)) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
};
/** A CAPTCHA provider's verify address: http(s), no credentials. */
const verifyUrl = (raw: string): string => {
  const url = parseHttpUrl(raw, 'https://challenges.cloudflare.com/turnstile/v0/siteverify');
  if (url.username || url.password) throw new Error('must not hold credentials');
  return raw;
};
/** `shipped`, `off`, or the path of a readable file (that it is an MMDB of countries is checked as it opens, at start). */
const countryDatabase = (raw: string): string => {
  if (raw === 'shipped' || raw === 'off') return raw;
  try {
    accessSync(raw, constants.R_OK);
  } catch {
    throw new Error(`${raw} cannot be read: give the path of a MaxMind-format (.mmdb) country database, shipped, or off`);
  }
  return raw;
};
const baseUrl = (raw: string): string => {
  const url = parseHttpUrl(raw, 'https://otp.example.com');
  if (url.search || url.hash) throw new Error('must not have a query or fragment');
  return raw.replace(/\/+$/, '');
};
/** TRUST_PROXY: false, a hop count, or the proxies' addresses (what Fastify's trustProxy takes). */
const trustProxy = (raw: string): false | number | string => {
  const v = raw.trim().toLowerCase();
  if (['false', 'no', 'off', '0'].includes(v)) return false;
  if (['true', 'yes', 'on'].includes(v)) return 1;
  if (/^\d+$/.test(v)) return integer(1, 100)(v);
  const parts = v.split(',').map((p) => p.trim()).filter((p) => p.length > 0);
  for (const part of parts) {
    const [address = '', bits] = part.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    if (family === 0 || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > max))) {
      throw new Error(`expected false, a hop count, or addresses / CIDR ranges of the proxies; "${part}" is none of them`);
    }
  }
  if (parts.length === 0) throw new Error('expected false, a hop count, or the proxies\' addresses');
  return parts.join(',');
};
const databaseUrl = (raw: string): string => {
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error('expected a postgres:// or postgresql:// URL');
  // Several hosts, libpq's way, are read here too, so that a wrong list is said at start.
  parseDatabaseUrl(raw);
  return raw;
};

/** ALLOWED_COUNTRIES: `all` (null), or ISO 3166 alpha-2 codes, upper-cased, each once. */
const countryList = (raw: string): readonly string[] | null => {
  if (raw.trim().toLowerCase() === 'all') return null;
  const codes = raw.split(',').map((c) => c.trim()).filter((c) => c.length > 0);
  const bad = codes.filter((c) => !/^[A-Za-z]{2}$/.test(c));
  if (codes.length === 0 || bad.length > 0) throw new Error(`expected all, or comma-separated ISO 3166 alpha-2 codes (NG,GH); not ${bad.join(', ') || 'an empty list'}`);
  return [...new Set(codes.map((c) => c.toUpperCase()))].sort();
};
/** BLOCKED_LINE_TYPES: `none`, or line type names as contract 11 spells them. */
const lineTypeList = (raw: string): readonly LineType[] => {
  if (raw.trim().toLowerCase() === 'none') return [];
  const names = raw.split(',').map((n) => n.trim().toUpperCase()).filter((n) => n.length > 0);
  const known = names.filter(isLineType);
  if (names.length === 0 || known.length !== names.length) {
    throw new Error(`expected none, or comma-separated line types among ${lineTypes.join(', ')}; got "${raw}"`);
  }
  return [...new Set(known)];
};

function namesFor(channel: Channel): string {
  return providerModules.filter((m) => m.channels.includes(channel)).map((m) => m.name).join(', ');
}
/** The setting that names each channel's providers. */
const providerSettingOf: Readonly<Record<Channel, string>> = {
  sms: 'SMS_PROVIDER',
  call: 'CALL_PROVIDER',
  whatsapp: 'WHATSAPP_PROVIDER',
  voice: 'VOICE_PROVIDER',
  telegram: 'TELEGRAM_PROVIDER',
  silent: 'SILENT_PROVIDER',
};

/** A comma-separated failover list of provider names, each known for the channel, none twice. */
const providerList = (channel: Channel) => (raw: string): string[] => {
  const names = raw.split(',').map((n) => n.trim()).filter((n) => n.length > 0);
  if (names.length === 0) throw new Error('expected at least one provider name');
  for (const name of names) {
    if (!providerModule(name)?.channels.includes(channel)) throw new Error(`unknown provider "${name}"; expected one of ${namesFor(channel)}`);
  }
  if (new Set(names).size !== names.length) throw new Error('a provider is named twice');
  return names;
};

/**
 * The embedded database's default folder: data/ beside the installed service (the folder holding src/ or dist/),
 * so that the server and the CLI find the same database from any working directory.
 */
export const defaultDataDir = fileURLToPath(new URL('../data', import.meta.url));

/** Every setting of the service: one table, read once at start. */
/**
 * The longest placing one dropped call may take, answered or not (contract 8): it rings for CALL_RING_SECONDS at
 * most, and a few seconds go to setting it up and hanging it up.
 */
export function callTimeoutMs(ringSeconds: number): number {
  return ringSeconds * 1000 + 5000;
}

export const settings = {
  PORT: { doc: 'TCP port the HTTP server listens on', default: '3000', parse: integer(0, 65535) },
  HOST: {
    doc: 'Address the HTTP server binds to. When unset: 0.0.0.0 (every interface) with DATABASE_URL; 127.0.0.1 (this machine only) on the embedded database, whose development client is printed on first start',
    default: undefined,
    parse: text,
  },
  HEADERS_TIMEOUT_MS: {
    doc: 'Time a client has to send a request\'s headers (from connecting, or from its previous request); then 408 and the connection is closed',
    default: '10000',
    parse: integer(100, 600_000),
  },
  REQUEST_TIMEOUT_MS: {
    doc: 'Time a client has to send a whole request, body included (from connecting, or from its previous request); then 408 and the connection is closed. At least HEADERS_TIMEOUT_MS',
    default: '30000',
    parse: integer(100, 3_600_000),
  },
  KEEP_ALIVE_TIMEOUT_MS: {
    doc: 'How long an idle keep-alive connection stays open between requests (keep it above a load balancer\'s idle time-out)',
    default: '72000',
    parse: integer(100, 3_600_000),
  },
  MAX_CONNECTIONS: {
    doc: 'Open HTTP connections per process at most; connections past it are closed as soon as they are accepted',
    default: '10000',
    parse: integer(1, 1_000_000),
  },
  LOG_LEVEL: {
    doc: 'pino log level',
    default: 'info',
    parse: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
  },
  DATABASE_URL: {
    doc: 'PostgreSQL connection URL; when unset the embedded database (PGlite) in DATA_DIR is used. Several hosts as libpq names them (postgres://u:p@h1:5432,h2:5432/db?target_session_attrs=read-write): connections go to whichever is the writable primary, found again after a failover',
    default: undefined,
    parse: databaseUrl,
  },
  DATABASE_POOL_SIZE: { doc: 'PostgreSQL connections per process', default: '20', parse: integer(1, 500) },
  DATABASE_PREPARED_STATEMENTS: {
    doc: "PostgreSQL: the statements every create sends are prepared once per connection (named statements), not parsed and planned again each time. Turn it off behind a pooler that does not keep a session's prepared statements, such as PgBouncer in transaction mode before 1.21 or without max_prepared_statements",
    default: 'true',
    parse: bool,
  },
  DATABASE_TIMEOUT_MS: {
    doc: 'The longest a database query or transaction may take, waiting for a connection included (PostgreSQL: connect, statement, lock and idle-in-transaction time-outs, and a client-side bound for a server that stops answering; embedded: the wait for its single session); past it the request answers 503 UNAVAILABLE and nothing is half done',
    default: '5000',
    parse: integer(100, 600_000),
  },
  DATA_DIR: {
    doc: 'Folder of the embedded database and its admin socket (memory:// keeps it in memory only). Default: data/ in the folder the service is installed in, whichever directory the server or the CLI is run from; a relative path given here is taken from the current directory',
    default: 'data',
    parse: text,
  },
  NODE_ENV: {
    doc: 'production: no development part runs (no log provider, no development inbox, no development client), and the start warns about what a deployment should set (PUBLIC_BASE_URL)',
    default: 'development',
    parse: text,
  },
  PUBLIC_BASE_URL: {
    doc: 'External base URL of the service (https://otp.example.com): the OAuth issuer, and where providers send delivery receipts (required with a provider that sends them); derived from the request when unset',
    default: undefined,
    parse: baseUrl,
  },
  TRUST_PROXY: {
    doc: 'Behind reverse proxies: false (default), the number of proxy hops in front of the service (true means 1), or their comma-separated addresses or CIDR ranges; the client address is the first untrusted hop, counting from the right of X-Forwarded-For. A hop count is safe only where the port is reachable through the proxies alone (a direct caller would write its own X-Forwarded-For); otherwise name the proxies\' addresses',
    default: 'false',
    parse: trustProxy,
  },
  TOKEN_TTL_SECONDS: { doc: 'Lifetime of an access token', default: '3600', parse: integer(60, 86_400) },
  OTP_TTL_SECONDS: { doc: 'Lifetime of a verification code', default: '600', parse: integer(10, 86_400) },
  OTP_LENGTH: { doc: 'Digits in an SMS code', default: '6', parse: integer(4, 10) },
  OTP_MAX_ATTEMPTS: { doc: 'Verify attempts before a verification is FAILED', default: '5', parse: integer(1, 100) },
  OTP_MAX_SENDS: {
    doc: 'Sends of one verification\'s code, the first one and its resends; a resend also waits PHONE_COOLDOWN_SECONDS after the last',
    default: '3',
    parse: integer(1, 20),
  },
  PHONE_LIMIT_COUNT: {
    doc: 'Verifications per phone number and client within PHONE_LIMIT_WINDOW_SECONDS',
    default: '5',
    parse: integer(1),
  },
  PHONE_LIMIT_WINDOW_SECONDS: { doc: 'Window of PHONE_LIMIT_COUNT', default: '600', parse: integer(1) },
  PHONE_COOLDOWN_SECONDS: {
    doc: 'Least time between two verifications of one number by one client, and between two sends of one verification (resend)',
    default: '30',
    parse: integer(0),
  },
  ALLOWED_COUNTRIES: {
    doc: 'Countries whose numbers may be verified: all, or ISO 3166 alpha-2 codes, comma-separated (NG,GH); any other destination is refused with 403 NUMBER_NOT_ALLOWED before anything is sent or counted. A client\'s own list narrows it further',
    default: 'all',
    parse: countryList,
  },
  BLOCKED_LINE_TYPES: {
    doc: `Line types (from the number metadata) refused like a country that is not allowed: none, or comma-separated among ${lineTypes.join(', ')}`,
    default: 'PREMIUM_RATE,SHARED_COST,UAN,PAGER,VOICEMAIL',
    parse: lineTypeList,
  },
  CLIENT_DAILY_SEND_LIMIT: {
    doc: 'Sends (creates, resends and workflow steps; test numbers never count) per client per UTC day, on by default so that a new deployment cannot be pumped for more than a day\'s worth; past it 429 RATE_LIMITED with Retry-After to the next UTC midnight. Never passed across instances; each other instance may hold up to 1.5 % of it unused. Raise it to the most sends a day you would pay for (0: no quota)',
    default: '10000',
    parse: integer(0),
  },
  COST_CURRENCY: {
    doc: 'The one currency (ISO 4217) of prices and costs: a price sheet in another is refused, and a price a provider reports in another is kept on its send but never summed',
    default: 'USD',
    parse: (raw: string): string => {
      const code = raw.trim().toUpperCase();
      if (!isCurrency(code)) throw new Error(`expected an ISO 4217 currency code (USD, EUR, NGN), got "${raw}"`);
      return code;
    },
  },
  NEW_COUNTRY_LIMIT_COUNT: {
    doc: 'Sends (creates and resends) per client per UTC hour towards a country where none of the client\'s codes was verified in the last 30 days; past it 429 RATE_LIMITED until the next hour. A number, address, network or device with a verified code of the client\'s goes past it, the country opens within seconds of its first verified code, and a client with no verified code anywhere yet is left to MIN_CONVERSION and CLIENT_DAILY_SEND_LIMIT. Allowed numbers and test numbers never count. 0 turns it off',
    default: '3',
    parse: integer(0),
  },
  ABROAD_LIMIT_SHARE: {
    doc: "Creates per UTC hour towards a country, across clients, by users with no verified history (number, address, network or device, the last 30 days) whose address is in another country than their number's (IP_COUNTRY_DATABASE): at most this share of the codes verified in that country over the last hour, and at least ABROAD_LIMIT_MIN; past it 429 RATE_LIMITED until the next hour (or the client's CAPTCHA with --captcha-when throttled). Allowed numbers and test numbers never count. 0 turns it off",
    default: '0.1',
    parse: fraction,
  },
  ABROAD_LIMIT_MIN: {
    doc: 'The least ABROAD_LIMIT_SHARE lets through per country per hour, however few codes were verified there',
    default: '20',
    parse: integer(0),
  },
  PREFIX_LIMIT_COUNT: {
    doc: 'Creates towards one prefix (the E.164 number less its last 3 digits: a range of 1000 numbers), across all clients, within PREFIX_LIMIT_WINDOW_SECONDS; the create past it blocks the prefix for PREFIX_BLOCK_SECONDS (403 NUMBER_NOT_ALLOWED). Test numbers never count. 0 turns it off',
    default: '10',
    parse: integer(0),
  },
  PREFIX_LIMIT_WINDOW_SECONDS: { doc: 'Window of PREFIX_LIMIT_COUNT', default: '3600', parse: integer(1) },
  PREFIX_BLOCK_SECONDS: {
    doc: 'How long a prefix past PREFIX_LIMIT_COUNT stays blocked (`otp-service blocks lift PREFIX` ends it sooner)',
    default: '86400',
    parse: integer(1),
  },
  IP_LIMIT_COUNT: {
    doc: 'Creates per end-user address (`signals.ip` on create; `::ffff:a.b.c.d` is `a.b.c.d`, every IPv6 spelling one address), per client, within SIGNAL_WINDOW_SECONDS, exact across instances; past it 429 RATE_LIMITED. A verified create frees its place; a create without `signals.ip` is not counted. 0 turns it off',
    default: '10',
    parse: integer(0),
  },
  IP_PREFIX_LIMIT_COUNT: {
    doc: 'Creates per network of the end-user address (its /24 for IPv4, /48 for IPv6), per client, within SIGNAL_WINDOW_SECONDS, as IP_LIMIT_COUNT. 0 turns it off',
    default: '50',
    parse: integer(0),
  },
  DEVICE_LIMIT_COUNT: {
    doc: 'Creates per end-user device (`signals.deviceId` on create), per client, within SIGNAL_WINDOW_SECONDS, as IP_LIMIT_COUNT. 0 turns it off',
    default: '5',
    parse: integer(0),
  },
  SIGNAL_WINDOW_SECONDS: { doc: 'Window of IP_LIMIT_COUNT, IP_PREFIX_LIMIT_COUNT and DEVICE_LIMIT_COUNT', default: '3600', parse: integer(1) },
  TURNSTILE_VERIFY_URL: {
    doc: "Cloudflare Turnstile's siteverify address, where the CAPTCHA tokens of clients set to `--captcha turnstile` are checked",
    default: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    parse: verifyUrl,
  },
  HCAPTCHA_VERIFY_URL: {
    doc: "hCaptcha's siteverify address (clients set to `--captcha hcaptcha`)",
    default: 'https://api.hcaptcha.com/siteverify',
    parse: verifyUrl,
  },
  RECAPTCHA_VERIFY_URL: {
    doc: "Google reCAPTCHA's siteverify address (clients set to `--captcha recaptcha`; v3 scores are held to the client's --captcha-min-score)",
    default: 'https://www.google.com/recaptcha/api/siteverify',
    parse: verifyUrl,
  },
  CAPTCHA_FAIL_OPEN: {
    doc: "A CAPTCHA provider that does not answer within 5 s (a reset, a 5xx, a body that is not JSON) lets the create through when true; by default the create is 503 UNAVAILABLE",
    default: 'false',
    parse: bool,
  },
  SIM_SWAP_PROVIDER: {
    doc: "Who is asked, before each send, whether the number's SIM changed lately (factor sim_swap_recent, rule sim-swap): camara (CAMARA SIM Swap at CAMARA_BASE_URL, within SIM_SWAP_MAX_AGE_HOURS) or twilio (Twilio Lookup v2's sim_swap, with TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN, within the period Twilio holds for the account). Unset: not asked",
    default: undefined,
    parse: oneOf('camara', 'twilio'),
  },
  CALL_FORWARDING_PROVIDER: {
    doc: "Who is asked, before each VOICE_CALL and DROPPED_CALL send, whether the number's calls are forwarded unconditionally (factor call_forwarding_active, rule call-forwarding): camara (CAMARA Call Forwarding Signal at CAMARA_BASE_URL). Unset: not asked",
    default: undefined,
    parse: oneOf('camara'),
  },
  SIM_SWAP_MAX_AGE_HOURS: { doc: 'How recent a SIM change flags a number, in hours (the maxAge of CAMARA SIM Swap, 1 to 2400)', default: '72', parse: integer(1, 2400) },
  CARRIER_CHECK_CACHE_SECONDS: {
    doc: "How long a number's carrier check answer is kept and reused, per check (each question costs); a failed or timed-out check is not kept. 0: asked for every send",
    default: '3600',
    parse: integer(0, 7 * 86_400),
  },
  CARRIER_CHECK_TIMEOUT_MS: {
    doc: 'The longest a send waits for a carrier check; one that takes longer, or fails, lets the send through (counted in otp_carrier_checks_total)',
    default: '1000',
    parse: integer(10, 10_000),
  },
  CAMARA_BASE_URL: {
    doc: "The CAMARA API root of the network operator or aggregator (its descriptions' {apiRoot}): SIM Swap at /sim-swap/v2, Call Forwarding Signal at /call-forwarding-signal/v0.4. Required when SIM_SWAP_PROVIDER or CALL_FORWARDING_PROVIDER is camara",
    default: undefined,
    parse: parseBaseUrl('https://api.example-operator.com/camara'),
  },
  CAMARA_TOKEN_URL: {
    doc: 'Where the CAMARA client-credentials access token is asked for (OAuth 2.0 token endpoint; the client authenticates with HTTP Basic). Required with CAMARA_BASE_URL',
    default: undefined,
    parse: (raw: string): string => parseHttpUrl(raw, 'https://auth.example-operator.com/oauth2/token').toString(),
  },
  CAMARA_CLIENT_ID: { doc: 'The client id of the CAMARA token endpoint. Required with CAMARA_BASE_URL', default: undefined, parse: parseSecret('client id') },
  CAMARA_CLIENT_SECRET: { doc: 'The client secret of the CAMARA token endpoint; never logged. Required with CAMARA_BASE_URL', default: undefined, parse: parseSecret('client secret') },
  TWILIO_LOOKUPS_BASE_URL: {
    doc: "Twilio Lookup v2's API (SIM_SWAP_PROVIDER=twilio); set it to a proxy or a local stand-in",
    default: 'https://lookups.twilio.com',
    parse: parseBaseUrl('https://lookups.twilio.com'),
  },
  MIN_CONVERSION: {
    doc: 'Share of codes verified, per country (and its mobile network, where the number data names it) and provider over the last hour, under which the country (that network) is throttled to the prefix limit (PREFIX_LIMIT_COUNT creates per PREFIX_LIMIT_WINDOW_SECONDS towards the whole country, across clients; past it 429 RATE_LIMITED) for PREFIX_BLOCK_SECONDS (`otp-service blocks lift NG` ends it sooner). Test numbers never count. 0 turns it off, as does PREFIX_LIMIT_COUNT=0',
    default: '0.2',
    parse: fraction,
  },
  MIN_CONVERSION_SAMPLE: {
    doc: 'Sends over the last hour a country and provider need before their conversion is judged (MIN_CONVERSION)',
    default: '200',
    parse: integer(1),
  },
  CONVERSION_SHORT_WINDOW_SECONDS: {
    doc: 'A second, short window beside the hour: a country and provider whose sends of this many seconds before the last half minute (whose codes are still being typed) are verified under MIN_CONVERSION is throttled as the hour would, however much ordinary traffic the hour holds. 0 turns it off',
    default: '60',
    parse: integer(0, 3600),
  },
  MIN_CONVERSION_SHORT_SAMPLE: {
    doc: 'Sends within CONVERSION_SHORT_WINDOW_SECONDS a country and provider need before that window\'s conversion is judged',
    default: '100',
    parse: integer(1),
  },
  MIN_RESEND_SAMPLE: {
    doc: 'Resends a client needs within CONVERSION_SHORT_WINDOW_SECONDS (before its last half minute) before their conversion is judged: when fewer than MIN_CONVERSION of the codes they resent are verified, for PREFIX_BLOCK_SECONDS a code of a user with no verified history (number, address, network or device, the last 30 days) is resent at most UNKNOWN_USER_RESENDS times (past it 429 RATE_LIMITED); known users and allowed numbers are never held. 0 turns it off, as do MIN_CONVERSION=0 and CONVERSION_SHORT_WINDOW_SECONDS=0',
    default: '50',
    parse: integer(0),
  },
  IP_COUNTRY_DATABASE: {
    doc: "Where the country of an end user's address (`signals.ip`) is looked up: `shipped` (the IP-to-country database that comes with the service, ip-location-db's geo-whois-asn-country), the path of another MaxMind-format (.mmdb) country or city database (GeoLite2, DB-IP Lite, a newer ip-location-db release), or `off`. A user whose address is in their number's country is a local user: under a country throttle a local user with no verified history still gets a code while the unverified codes of such users stay under a tenth of the codes verified in the country since the throttle began (or under PREFIX_LIMIT_COUNT), and under a resend throttle only a local user gets the UNKNOWN_USER_RESENDS free resends",
    default: 'shipped',
    parse: countryDatabase,
  },
  UNKNOWN_USER_RESENDS: {
    doc: "Resends of one code a user with no verified history gets while the client's resends are throttled (MIN_RESEND_SAMPLE); 0: none",
    default: '1',
    parse: integer(0),
  },
  CLIENT_RATE_LIMIT_PER_SECOND: {
    doc: 'Requests per second per client on /v1 (0 turns the limit off)',
    default: '200',
    parse: integer(0),
  },
  AUTH_FAILURE_LIMIT: {
    doc: 'Failed authentications of one client id from one address per minute before the token endpoint answers that pair 429 (other clients behind the address are not affected)',
    default: '10',
    parse: integer(1),
  },
  SMS_PROVIDER: {
    doc: `SMS providers, comma-separated in failover order: ${namesFor('sms')}. When unset: log in development if no channel names a provider; otherwise SEND_SMS is not offered`,
    default: undefined,
    parse: providerList('sms'),
  },
  CALL_PROVIDER: {
    doc: `Dropped-call providers, comma-separated in failover order: ${namesFor('call')}. When unset: log in development if no channel names a provider; otherwise DROPPED_CALL is not offered`,
    default: undefined,
    parse: providerList('call'),
  },
  WHATSAPP_PROVIDER: {
    doc: `WhatsApp providers, comma-separated in failover order: ${namesFor('whatsapp')}. When unset: log in development if no channel names a provider; otherwise WHATSAPP is not offered`,
    default: undefined,
    parse: providerList('whatsapp'),
  },
  VOICE_PROVIDER: {
    doc: `Voice-call providers (the code read aloud), comma-separated in failover order: ${namesFor('voice')}. When unset: log in development if no channel names a provider; otherwise VOICE_CALL is not offered`,
    default: undefined,
    parse: providerList('voice'),
  },
  TELEGRAM_PROVIDER: {
    doc: `Telegram providers (the code in a Telegram message, through the Telegram Gateway), comma-separated in failover order: ${namesFor('telegram')}. When unset: log in development if no channel names a provider; otherwise TELEGRAM is not offered`,
    default: undefined,
    parse: providerList('telegram'),
  },
  SILENT_PROVIDER: {
    doc: `Silent verification (create type SILENT: the device proves its number, no code is sent), one provider per deployment: ${namesFor('silent')} (docs/silent.md). When unset, SILENT is not offered`,
    default: undefined,
    parse: (raw: string): string[] => {
      const names = providerList('silent')(raw);
      if (names.length > 1) throw new Error(`name one provider (${namesFor('silent')}): a silent verification has no failover`);
      return names;
    },
  },
  SILENT_TIMEOUT_SECONDS: {
    doc: "Seconds after a SILENT create within which the device must prove its number; then that step fails: the workflow's next step sends a code at once, else the verification is FAILED, UNDELIVERABLE",
    default: '30',
    parse: integer(1, 3_600),
  },
  SEND_LEASE_MS: {
    doc: "How long a send job is held by the process sending it; a crashed process's sends are made again after it. Must exceed PROVIDER_TIMEOUT_MS",
    default: '60000',
    parse: integer(200, 3_600_000),
  },
  PROVIDER_TIMEOUT_MS: {
    doc: 'How long one provider call is expected to take; past it the attempt is in doubt and its answer is still awaited, up to nearly SEND_LEASE_MS, rather than the code sent again',
    default: '10000',
    parse: integer(100, 50_000),
  },
  SMS_SENDER_NUMBER: {
    doc: 'Number SMS codes are sent from (E.164); returned as pairedNumber, in local format to numbers of its own country and in E.164 to others',
    default: '+2349010000000',
    parse: text,
  },
  WHATSAPP_SENDER_NUMBER: {
    doc: 'The WhatsApp business number codes come from (E.164), shown as pairedNumber of a WHATSAPP verification; SMS_SENDER_NUMBER when unset',
    default: undefined,
    parse: text,
  },
  VOICE_CALLER_NUMBER: {
    doc: 'Number voice calls come from (E.164; the call\'s From, returned as pairedNumber); unset: SMS_SENDER_NUMBER',
    default: undefined,
    parse: (raw: string): string => {
      if (parseE164(raw.trim()) === null) throw new Error(`expected a valid E.164 number (+2349010000000), got "${raw}"`);
      return raw.trim();
    },
  },
  VOICE_PROMPTS_DIR: {
    doc: 'Folder of recorded prompts for SIP voice calls: <locale>/0.wav ... 9.wav and optionally intro.wav ("Your code is"), 16-bit PCM mono WAV at any rate; a locale without them (fr-CA, then fr) is synthesised with espeak-ng',
    default: undefined,
    parse: text,
  },
  VOICE_REPEAT: { doc: 'How many times a voice call reads the whole code, digit by digit', default: '3', parse: integer(1, 5) },
  CALLER_ID_RANGES: {
    doc: 'Comma-separated E.164 ranges (start-end) that dropped calls come from; the last 4 digits are the code',
    default: '+2349010000000-+2349010009999',
    parse: (raw: string): CallerIdRange[] => parseCallerIdRanges(raw),
  },
  CALL_RING_SECONDS: {
    doc: 'The longest a dropped call may ring before it is hung up (it is hung up as soon as the phone rings); placing one takes at most this plus 5 s',
    default: '15',
    parse: integer(3, 60),
  },
  CALL_FALLBACK_TO_SMS: {
    doc: 'When no call provider can place a dropped call, send the same code by SMS (delivery.channel reads SMS)',
    default: 'false',
    parse: bool,
  },
  FALLBACK_AFTER_SECONDS: {
    doc: "Seconds after a step's code was sent without a successful verify before the workflow's next step (create `fallback`) sends it through the next channel; a client setting may change it",
    default: '60',
    parse: integer(1, 86_400),
  },
  SEND_RETRY_DELAYS: {
    doc: 'Seconds between retries of a failed SMS or call before the verification is FAILED',
    default: '2,10,30,60',
    parse: seconds,
  },
  WEBHOOK_TIMEOUT_MS: { doc: 'Time a webhook receiver has to answer', default: '10000', parse: integer(100, 120_000) },
  WEBHOOK_RETRY_DELAYS: {
    doc: 'Seconds before each retry of a failed webhook delivery (each with ±20% jitter); after the last the event is kept as failed',
    default: '5,300,1800,7200,18000,36000,36000',
    parse: seconds,
  },
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: {
    doc: 'Allow webhook destinations on loopback and every private network (development only: refused with NODE_ENV=production, where WEBHOOK_ALLOWED_NETWORKS names the networks to allow)',
    default: 'false',
    parse: bool,
  },
  WEBHOOK_ALLOWED_NETWORKS: {
    doc: 'Private destinations webhooks may go to, comma-separated: CIDR ranges (10.20.0.0/16, fd00::/8, one address) and host names (hooks.internal; .svc.cluster.local for every name under it); every other private, loopback or reserved address stays refused. In production, http: (not https) is taken only for these',
    default: '',
    parse: parseAllowedNetworks,
  },
  WEBHOOK_LEASE_MS: {
    doc: 'How long a worker holds a webhook delivery it claimed; a crashed worker\'s deliveries are retried after it. Must exceed WEBHOOK_TIMEOUT_MS',
    default: '60000',
    parse: integer(200, 3_600_000),
  },
  WEBHOOK_CONCURRENCY: {
    doc: 'Webhook deliveries in flight at once in one process (one slow receiver never holds up the others)',
    default: '32',
    parse: integer(1, 1000),
  },
  WEBHOOK_POLL_INTERVAL_MS: {
    doc: 'How often the delivery worker looks for due webhooks when nothing wakes it (commits and, on PostgreSQL, LISTEN/NOTIFY wake it at once)',
    default: '1000',
    parse: integer(10, 600_000),
  },
  WEBHOOK_WORKER: {
    doc: 'Deliver webhooks from this server process (turn off when running `otp-service worker` separately)',
    default: 'true',
    parse: bool,
  },
  RETENTION_DAYS: {
    doc: 'Days to keep delivered or unsent webhook events (with their attempts), stored messages, finished send jobs, number lookups, ended prefix blocks and country throttles, daily send counts, budgeted clients\' spend of ended days and months, the refused creates kept for `otp-service verdicts`, and the signals creates came with (0 keeps them forever); verifications (less their signals) and failed events are kept',
    default: '30',
    parse: integer(0, 36_500),
  },
  VERIFICATION_RETENTION_DAYS: {
    doc: 'Days after which a verification\'s personal data is erased: its phone number (reduced to its prefix, so that the counts that protect the service still count it), code, reference and signals, with the texts sent and its webhook events; it then reads 404. 0 (default) keeps them. `otp-service erase --phone` and DELETE /v1/otp/{id} erase at once',
    default: '0',
    parse: integer(0, 36_500),
  },
  REVEAL_CODES_DEFAULT: {
    doc: 'Whether a new client\'s answers and webhooks show the code (its otp field); true by default in development, false with NODE_ENV=production, where an app that passes a create answer on to a browser would hand over the code. Set per client with `clients create|update --reveal-code true|false`; a client keeps what it was made with when this changes',
    default: undefined,
    parse: bool,
  },
  DEV_INBOX: {
    doc: 'The development inbox (GET /dev/inbox, a live page of the codes the log provider "sent"): on by default only when every configured provider is log and the server binds to a loopback address; true turns it on beside a real provider or on another address (it shows codes to whoever reaches the server; refused with NODE_ENV=production), false turns it off',
    default: undefined,
    parse: bool,
  },
  CONSOLE: {
    doc: 'The operator console (GET /console): true serves it; operators are made with `otp-service operators create --email E`. Off by default: /console is then a 404',
    default: 'false',
    parse: bool,
  },
  CONSOLE_ORIGIN: {
    doc: 'The console\'s origin as browsers reach it (https://otp.example.com): the only Origin its changes are taken from, the passkeys\' relying party, and where one-time links point. Default: PUBLIC_BASE_URL\'s origin; unset both, the origin each request names (development). Required (https) with CONSOLE=true and NODE_ENV=production unless PUBLIC_BASE_URL is https',
    default: undefined,
    parse: (raw: string): string => {
      const url = parseHttpUrl(raw, 'https://otp.example.com');
      if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) throw new Error('must be an origin: scheme, host and port only');
      return url.origin;
    },
  },
  SHUTDOWN_GRACE_MS: { doc: 'How long SIGTERM\'s stop may take in all: requests in flight get all but a fifth of it (at most 2 s), then the workers and providers stop; at its end the process exits whatever still waits (a send or webhook still waiting is taken again after its claim)', default: '10000', parse: integer(0) },
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
export type Config = Readonly<{
  [K in keyof Settings]: Settings[K]['default'] extends string
    ? ReturnType<Settings[K]['parse']>
    : ReturnType<Settings[K]['parse']> | undefined;
}> & {
  readonly adminSocketPath: string;
  /** HOST, or its default: loopback on the embedded (development) database, every interface with PostgreSQL. */
  readonly listenHost: string;
  /**
   * The providers of each channel, in failover order, with their parsed settings; an empty list: the channel is
   * not offered (creates of its type are refused).
   */
  readonly providers: Readonly<Record<Channel, readonly ConfiguredProvider[]>>;
  /**
   * Whether GET /dev/inbox is served: DEV_INBOX, or when unset, whether every configured provider is `log` and the
   * server binds to loopback only.
   */
  readonly devInbox: boolean;
  /** Whether new clients show their codes: REVEAL_CODES_DEFAULT, or when unset, true outside production. */
  readonly revealCodesDefault: boolean;
  /** The console's configured origin (CONSOLE_ORIGIN, else PUBLIC_BASE_URL's); null: each request's own (development). */
  readonly consoleOrigin: string | null;
  /** The carrier checks configured, with their peers' settings (contract 18). */
  readonly carrier: CarrierSettings;
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses every setting once; throws a ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, setting] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const given = env[name];
    const raw = given === undefined || given === '' ? setting.default : given;
    if (raw === undefined) {
      out[name] = undefined;
      continue;
    }
    try {
      out[name] = setting.parse(raw);
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`);
    }
  }
  // A lease that ran out while its attempt is still waiting for an answer would let a second worker send it.
  if (problems.length === 0 && Number(out.WEBHOOK_LEASE_MS) <= Number(out.WEBHOOK_TIMEOUT_MS)) {
    problems.push(`WEBHOOK_LEASE_MS: must be longer than WEBHOOK_TIMEOUT_MS (${String(out.WEBHOOK_TIMEOUT_MS)})`);
  }
  if (problems.length === 0 && Number(out.SEND_LEASE_MS) <= Number(out.PROVIDER_TIMEOUT_MS)) {
    problems.push(`SEND_LEASE_MS: must be longer than PROVIDER_TIMEOUT_MS (${String(out.PROVIDER_TIMEOUT_MS)})`);
  }
  if (problems.length === 0 && Number(out.HEADERS_TIMEOUT_MS) > Number(out.REQUEST_TIMEOUT_MS)) {
    problems.push(`HEADERS_TIMEOUT_MS: must not be longer than REQUEST_TIMEOUT_MS (${String(out.REQUEST_TIMEOUT_MS)})`);
  }
  const providers = problems.length === 0 ? configuredProviders(out, env, problems) : null;
  const carrier = problems.length === 0 ? carrierSettingsOf(out, env, problems) : null;
  // CAMARA Number Verification trades the device's code at the service's CAMARA token endpoint, as its client,
  // asks CAMARA_BASE_URL, and has the operator send the device back to PUBLIC_BASE_URL.
  if (providers?.silent.some((p) => p.module.name === 'camara')) {
    for (const key of ['CAMARA_BASE_URL', 'CAMARA_TOKEN_URL', 'CAMARA_CLIENT_ID', 'CAMARA_CLIENT_SECRET', 'PUBLIC_BASE_URL']) {
      if (out[key] === undefined) problems.push(`${key}: required by SILENT_PROVIDER=camara`);
    }
  }
  // A call rings before its provider answers; `log` answers at once, so only a real call provider needs the room.
  const placesRealCalls = [...(providers?.call ?? []), ...(providers?.voice ?? [])].some((p) => p.module.name !== 'log');
  if (placesRealCalls && Number(out.SEND_LEASE_MS) <= callTimeoutMs(Number(out.CALL_RING_SECONDS))) {
    problems.push(`SEND_LEASE_MS: must be longer than a call may take, CALL_RING_SECONDS + 5 s (${callTimeoutMs(Number(out.CALL_RING_SECONDS))} ms)`);
  }
  if (out.NODE_ENV === 'production' && out.WEBHOOK_ALLOW_PRIVATE_NETWORKS === true) {
    problems.push('WEBHOOK_ALLOW_PRIVATE_NETWORKS: true is refused with NODE_ENV=production: it lets webhooks reach every address of this machine and its networks; name the networks your receivers are on in WEBHOOK_ALLOWED_NETWORKS (10.20.0.0/16, hooks.internal)');
  }
  if (out.NODE_ENV === 'production' && out.DEV_INBOX === true) {
    problems.push('DEV_INBOX: true is refused with NODE_ENV=production: the development inbox shows every code to whoever reaches the server');
  }
  const consoleOrigin = typeof out.CONSOLE_ORIGIN === 'string' ? out.CONSOLE_ORIGIN : typeof out.PUBLIC_BASE_URL === 'string' ? new URL(out.PUBLIC_BASE_URL).origin : null;
  // In production the console's cookies are Secure and its passkeys bound to one name: it needs its https origin.
  if (out.CONSOLE === true && out.NODE_ENV === 'production' && !consoleOrigin?.startsWith('https://')) {
    problems.push('CONSOLE: true with NODE_ENV=production needs the console\'s https origin: set CONSOLE_ORIGIN (or an https PUBLIC_BASE_URL)');
  }
  if (problems.length > 0 || !providers || !carrier) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  out.providers = providers;
  out.carrier = carrier;
  out.consoleOrigin = consoleOrigin;
  out.listenHost = out.HOST ?? (out.DATABASE_URL === undefined ? '127.0.0.1' : '0.0.0.0');
  // The inbox shows codes: never beside a real provider, nor to other machines, unless the operator asked for it.
  out.devInbox = typeof out.DEV_INBOX === 'boolean' ? out.DEV_INBOX : onlyLogProviders(providers) && isLoopback(String(out.listenHost));
  out.revealCodesDefault = typeof out.REVEAL_CODES_DEFAULT === 'boolean' ? out.REVEAL_CODES_DEFAULT : out.NODE_ENV !== 'production';
  // memory:// keeps the embedded database in memory (tests); there is then no admin socket.
  const given = env.DATA_DIR === undefined || env.DATA_DIR === '' ? null : String(out.DATA_DIR);
  const dataDir = given === null ? defaultDataDir : given === 'memory://' ? 'memory://' : path.resolve(given);
  out.DATA_DIR = dataDir;
  out.adminSocketPath = dataDir === 'memory://' ? '' : path.join(dataDir, 'admin.sock');
  return Object.freeze(out) as Config;
}

/** A channel's configured providers by name, in its setting's order (SMS_PROVIDER...): its default route. */
export function providerNames(providers: Config['providers'], channel: Channel): readonly string[] {
  return providers[channel].map((p) => p.module.name);
}

/** Whether every configured provider is the development `log` provider (nothing leaves the machine). */
export function onlyLogProviders(providers: Config['providers']): boolean {
  return Object.values(providers).every((list) => list.every((p) => p.module.name === 'log'));
}

/** Whether an address or name is this machine only (127.0.0.0/8, ::1, localhost): a bind address, or a Host's. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** loadConfig for a command: a bad setting is printed to stderr and gives null (the caller exits with 2). */
export function loadConfigOrReport(env: NodeJS.ProcessEnv = process.env): Config | null {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return null;
  }
}

/** A parsed provider list, or null when the setting was not given. */
function names(value: unknown): string[] | null {
  return Array.isArray(value) ? value.map(String) : null;
}

/** Each configured provider's own settings, parsed; a missing required one is named in `problems`. */
function configuredProviders(
  out: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  problems: string[],
): Record<Channel, ConfiguredProvider[]> {
  const parsed = new Map<string, ConfiguredProvider>();
  const configure = (name: string, forChannels: readonly Channel[]): ConfiguredProvider[] => {
    const module = providerModule(name);
    if (!module) return [];
    const known = parsed.get(name);
    if (known) return [known];
    const values: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries(module.settings)) {
      const given = env[key];
      const raw = given === undefined || given === '' ? setting.default : given;
      if (raw === undefined) {
        // Settings only some channels of the provider use (Twilio's WhatsApp sender, Vonage's voice application)
        // are required when it serves one of those.
        const neededFor = setting.requiredFor?.filter((c) => forChannels.includes(c)) ?? [];
        if (setting.required) problems.push(`${key}: required by the ${name} provider`);
        else if (neededFor.length > 0) problems.push(`${key}: required by the ${name} provider for ${neededFor.map((c) => providerSettingOf[c]).join(', ')}`);
        continue;
      }
      try {
        values[key] = setting.parse(raw);
      } catch (err) {
        problems.push(`${key}: ${(err as Error).message}`);
      }
    }
    const configured = { module, values };
    parsed.set(name, configured);
    return [configured];
  };
  const named: Record<Channel, string[] | null> = {
    sms: names(out.SMS_PROVIDER),
    call: names(out.CALL_PROVIDER),
    whatsapp: names(out.WHATSAPP_PROVIDER),
    voice: names(out.VOICE_PROVIDER),
    telegram: names(out.TELEGRAM_PROVIDER),
    silent: names(out.SILENT_PROVIDER),
  };
  const production = out.NODE_ENV === 'production';
  const anyNamed = Object.values(named).some((list) => list !== null);
  // A channel nobody named: `log` while developing with no real provider anywhere; otherwise it is off, so that a
  // create of its type is refused rather than "sent" through `log` beside real providers.
  const unnamed = anyNamed || production ? [] : ['log'];
  // A silent verification is never `log`'s: without SILENT_PROVIDER, SILENT is not offered.
  const listOf = (channel: Channel): string[] => named[channel] ?? (channel === 'silent' ? [] : unnamed);
  if (production) {
    if (!anyNamed) {
      problems.push('SMS_PROVIDER: NODE_ENV=production needs a real provider (SMS_PROVIDER and, for dropped calls, CALL_PROVIDER); nothing would leave this machine');
    }
    for (const channel of channels) {
      const key = providerSettingOf[channel];
      if (listOf(channel).includes('log')) problems.push(`${key}: log sends nothing and is refused with NODE_ENV=production; name a real provider, or unset ${key} to turn its channel off`);
    }
  }
  // The channels each provider is named for: a setting may be needed for some of them only.
  const channelsOf = (name: string): Channel[] => channels.filter((c) => listOf(c).includes(name));
  const configured = perChannel((c) => listOf(c).flatMap((name) => configure(name, channelsOf(name))));
  // Providers that call back need to be told where: their receipts come to PUBLIC_BASE_URL/callbacks/<name>.
  const callingBack = [...parsed.values()].filter((p) => p.module.callbacks).map((p) => p.module.name);
  if (callingBack.length > 0 && out.PUBLIC_BASE_URL === undefined) {
    problems.push(`PUBLIC_BASE_URL: required by ${callingBack.join(', ')} (delivery receipts call back to PUBLIC_BASE_URL/callbacks/<provider>)`);
  }
  return configured;
}

/** The signal limits (contract 14) as the verification service applies them. */
export function signalPolicy(config: Config): { ipCount: number; networkCount: number; deviceCount: number; windowSeconds: number } {
  return {
    ipCount: config.IP_LIMIT_COUNT,
    networkCount: config.IP_PREFIX_LIMIT_COUNT,
    deviceCount: config.DEVICE_LIMIT_COUNT,
    windowSeconds: config.SIGNAL_WINDOW_SECONDS,
  };
}
