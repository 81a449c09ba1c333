/**
 * The pumping simulation (issues 12 and 20): ordinary users, most of whom verify, mixed with SMS pumping, through
 * the service's own HTTP app and a real PostgreSQL, on a simulated clock (an hour's fraud rules in a minute or so).
 * The settings are the defaults; what is measured is who gets a code, not how fast.
 *
 * Ordinary users send signals as a client's backend would: their address and their device. A warm-up on the day
 * before (users signing up, most verifying) gives the client the history any running service has; then each
 * ordinary create is a returning user (their number, device and address again) or a new one, from their own
 * address in one of their country's networks or from behind a carrier's NAT address shared by many.
 */
import { getExampleNumber, type CountryCode } from 'libphonenumber-js/max';
import mobileExamples from 'libphonenumber-js/mobile/examples';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { runAdminCommand } from '../../src/admin/commands.js';
import { loadConfig, type Config } from '../../src/config.js';
import { addressCountriesOf } from '../../src/metadata/address-country.js';
import { parsePhone } from '../../src/domain/phone.js';
import { cryptoRandom } from '../../src/domain/random.js';
import { conversionRefreshMs } from '../../src/jobs/workers.js';
import { buildApp } from '../../src/http/app.js';
import { adminDeps } from '../../src/admin/deps.js';
import { appDeps } from '../../src/server.js';
import { createServices } from '../../src/services.js';

export interface PumpingSettings {
  /** Simulated minutes of each attack. */
  readonly minutes: number;
  /** Ordinary creates per simulated second, and the share of them verified. */
  readonly ordinaryPerSecond: number;
  readonly ordinaryVerifyShare: number;
  /** Attack creates per simulated second (never verified), unless the attack sets its own rate. */
  readonly attackPerSecond: number;
  /** Users who sign up (and mostly verify) on the day before: the client's history. */
  readonly warmUpUsers: number;
  /** Ordinary creates that are a returning user's, and new users' share behind a carrier NAT address. */
  readonly returningShare: number;
  readonly natShare: number;
  /** New users' share who connect from an address abroad (roaming, a VPN): their address is not their number's country's. */
  readonly abroadShare?: number;
  /**
   * Ordinary users whose code is late or lost and who ask for it again (POST /v1/otp/{id}/resend) once the
   * cool-down is over, and the share of those who ask a second time; absent: none resend.
   */
  readonly resendShare?: number;
  readonly secondResendShare?: number;
  /**
   * Simulated minutes of ordinary traffic on the morning before the attack starts (0: it starts with the morning).
   * With an hour of it, a country's hourly conversion is diluted by ordinary users, as in a busy service.
   */
  readonly leadMinutes?: number;
  /**
   * The client asks for a CAPTCHA before a throttle refuses (`--captcha-when throttled`): ordinary users solve it
   * and send the create again with the token; attackers do not (a solving service is not modelled).
   */
  readonly captchaWhenThrottled?: boolean;
  /** Settings other than the defaults, to compare (BENCH_PUMPING_SERVICE_ENV=CONVERSION_SHORT_WINDOW_SECONDS=0). */
  readonly serviceEnv?: Readonly<Record<string, string>>;
}

/** Sends asked for and let through (creates and resends). */
export interface SendCount {
  readonly asked: number;
  readonly through: number;
}

/** Who asked, who got a code, who was refused, for one attack. */
export interface PumpingRun {
  readonly attack: string;
  readonly ordinary: {
    readonly asked: number;
    readonly refused: number;
    readonly refusedByStatus: Record<string, number>;
    readonly captchaSolved: number;
    /** Resends ordinary users asked for, and those refused (each a user who got no code: counted against the 0.5 % as a refused create is). */
    readonly resendsAsked?: number;
    readonly resendsRefused?: number;
  };
  readonly attackFirstMinute: SendCount;
  readonly attackAfter: SendCount;
  /** The sends through after the first minute, by kind and by whether the country is one of the ordinary users'. */
  readonly attackAfterBy: { readonly ownCreates: number; readonly ownResends: number; readonly otherCreates: number; readonly otherResends: number };
  /** What the attack cost: every send it got, and per simulated hour. */
  readonly attackSends: number;
  readonly attackSendsPerHour: number;
  readonly attackRefusedByStatus: Record<string, number>;
  /** The risk factors (and their rules) of the attack's refused creates and resends, and of ordinary users' (issue 32). */
  readonly attackFactors?: Record<string, number>;
  readonly ordinaryFactors?: Record<string, number>;
  /** The attack's codes it verified itself (attack 7). */
  readonly attackVerified?: number;
  /** Throttles and blocks in force at the end. */
  readonly prefixBlocks: number;
  readonly countryThrottles: string[];
  readonly clientThrottled: boolean;
  readonly wallSeconds: number;
}

export interface PumpingResults {
  readonly settings: PumpingSettings;
  readonly runs: PumpingRun[];
}

/** What one create asks for: the number and the end user as the client's backend saw them. */
export interface Ask {
  readonly countryCode: string;
  readonly phoneNumber: string;
  readonly captchaToken?: string;
  readonly signals?: { readonly ip: string; readonly deviceId?: string; readonly platform?: string };
}

/** An attack: its n-th create, its rate and how often it resends each code it got. */
export interface Attack {
  readonly name: string;
  readonly short: string;
  next(n: number): Ask;
  /** Resends of each code let through, each after the cool-down. */
  readonly resends: number;
  /** The share of the codes it gets that it verifies itself (its numbers are its own, or its carrier's); absent: none. */
  readonly verifies?: number;
  /** Creates per simulated second; absent: the settings'. */
  readonly perSecond?: (config: Config, settings: PumpingSettings) => number;
  /** Reported as sends per hour rather than against the targets. */
  readonly slow?: boolean;
}

/**
 * South Africa's mobile ranges, about as its users are spread over its networks: Vodacom three in eight, MTN two,
 * Cell C two, Telkom one (Google's number data names each range's network).
 */
const zaRanges = ['82', '72', '76', '83', '73', '84', '61', '81'] as const;

/**
 * Where ordinary users live, with how a random mobile number of each reads locally, and where their addresses are:
 * two /16s of the country's own address space for their home networks and one for its carriers' NAT addresses
 * (each checked against the service's IP-to-country database when the simulation starts).
 */
const ordinaryCountries = [
  { countryCode: '+234', region: 'NG', weight: 4, local: (r: Rng) => `080${3 + (r() % 4)}${digits(r, 7)}`, home: ['105.112', '105.113'], nat: '102.89' },
  { countryCode: '+233', region: 'GH', weight: 2, local: (r: Rng) => `024${digits(r, 7)}`, home: ['154.160', '154.161'], nat: '154.162' },
  { countryCode: '+254', region: 'KE', weight: 2, local: (r: Rng) => `07${10 + (r() % 30)}${digits(r, 6)}`, home: ['41.89', '41.90'], nat: '41.80' },
  // South Africa's users on its four networks (Vodacom 082/072/076, MTN 083/073, Cell C 084/061, Telkom 081).
  { countryCode: '+27', region: 'ZA', weight: 2, local: (r: Rng) => `0${zaRanges[r() % zaRanges.length]}${digits(r, 7)}`, home: ['41.0', '41.1'], nat: '41.2' },
] as const;
const totalWeight = ordinaryCountries.reduce((sum, c) => sum + c.weight, 0);

type Rng = () => number;

function digits(r: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i += 1) s += String(r() % 10);
  return s;
}

/** A small seeded generator: the same users and attack every run. */
function seeded(seed: number): Rng {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % 1_000_000_007;
  };
}

/**
 * An address anywhere but the ordinary users' networks (41/8 here): a proxy pool's. A few land in the ordinary
 * users' countries (about 1 in 120: parts of 102/8, 105/8 and 154/8 are theirs), as a pool's would.
 */
function anyAddress(r: Rng): string {
  return `${50 + (r() % 140)}.${r() % 256}.${r() % 256}.${1 + (r() % 254)}`;
}

/** Networks per country the ordinary users' own addresses come from (their /24s), and carrier NAT addresses. */
const homeNetworks = 400;
const natAddresses = 3;

/** The contract's first attack: sequential numbers of a few ranges (3 of +234 803 555 x), each from a new address. */
export function sequentialWalk(seed = 3): Attack {
  const r = seeded(seed);
  return {
    name: 'sequential numbers of 3 prefixes (+234803555{0,1,2}xxx), each from a new address',
    short: 'sequential',
    resends: 0,
    next: (n) => ({
      countryCode: '+234',
      phoneNumber: `0803555${n % 3}${String(Math.floor(n / 3) % 1000).padStart(3, '0')}`,
      signals: { ip: anyAddress(r) },
    }),
  };
}

/** Random numbers all over one country's ranges (South Africa, where a fifth of the ordinary users live). */
function zaNumber(r: Rng): Pick<Ask, 'countryCode' | 'phoneNumber'> {
  return { countryCode: '+27', phoneNumber: `082${digits(r, 7)}` };
}

/** The second: random numbers across one country from a few addresses (5, in one /24). */
export function fewAddresses(seed = 7): Attack {
  const r = seeded(seed);
  return {
    name: 'random numbers across one country (+27 82) from 5 addresses',
    short: 'few addresses',
    resends: 0,
    next: (n) => ({ ...zaNumber(r), signals: { ip: `185.220.101.${1 + (n % 5)}` } }),
  };
}

/** The third: random numbers across one country, each create from a new address and device. */
export function freshAddresses(seed = 11): Attack {
  const r = seeded(seed);
  return {
    name: 'random numbers across one country (+27 82), each from a new address and device',
    short: 'new address each',
    resends: 0,
    next: (n) => ({ ...zaNumber(r), signals: { ip: anyAddress(r), deviceId: `attack-${seed}-${n}`, platform: 'web' } }),
  };
}

/**
 * The third again from a residential proxy pool in the country itself: each create from a new address of ZA's
 * 41.0.0.0/11 (where ordinary ZA users are too), so that the address says what a local user's says. It measures
 * what the room a throttled country keeps for local users gives an attacker who can look local.
 */
export function localProxies(seed = 19): Attack {
  const r = seeded(seed);
  return {
    name: 'random numbers across one country (+27 82), each from a new address in that country and a new device',
    short: 'local proxies',
    resends: 0,
    next: (n) => ({ ...zaNumber(r), signals: { ip: `41.${r() % 32}.${r() % 256}.${1 + (r() % 254)}`, deviceId: `local-${seed}-${n}`, platform: 'android' } }),
  };
}

/** 150 regions with mobile numbers, chosen by a seeded shuffle of libphonenumber's list. */
function spreadRegions(r: Rng): CountryCode[] {
  const all = (Object.keys(mobileExamples) as CountryCode[]).filter((c) => getExampleNumber(c, mobileExamples)).sort();
  for (let i = all.length - 1; i > 0; i -= 1) {
    const j = r() % (i + 1);
    [all[i], all[j]] = [all[j] as CountryCode, all[i] as CountryCode];
  }
  return all.slice(0, 150);
}

/** A random valid mobile number of a region: its example number with the last digits changed. */
function randomMobile(r: Rng, region: CountryCode): Pick<Ask, 'countryCode' | 'phoneNumber'> {
  const example = getExampleNumber(region, mobileExamples);
  if (!example) throw new Error(`no mobile example for ${region}`);
  const countryCode = `+${example.countryCallingCode}`;
  const national = example.nationalNumber;
  for (let tries = 0; tries < 50; tries += 1) {
    const keep = Math.max(2, national.length - 6);
    const phoneNumber = national.slice(0, keep) + digits(r, national.length - keep);
    if (parsePhone(countryCode, phoneNumber)) return { countryCode, phoneNumber };
  }
  return { countryCode, phoneNumber: national };
}

/** The fourth: random numbers spread over 150 countries, each from a new address and device, resent twice. */
export function spreadWithResends(seed = 13): Attack {
  const r = seeded(seed);
  const regions = spreadRegions(r);
  return {
    name: 'random numbers spread over 150 countries, each resent twice, each from a new address and device',
    short: '150 countries + resends',
    resends: 2,
    next: (n) => ({ ...randomMobile(r, regions[n % regions.length] as CountryCode), signals: { ip: anyAddress(r), deviceId: `spread-${n}`, platform: 'web' } }),
  };
}

/**
 * The slow attack: it stays just under every threshold it can see. Each create from a new address and device
 * (signal limits never fill), random numbers (prefix velocity never fills), spread over 150 countries at just
 * under NEW_COUNTRY_LIMIT_COUNT sends an hour in each (where the client has no verified history), never resent.
 */
export function slowSpread(seed = 17): Attack {
  const r = seeded(seed);
  const regions = spreadRegions(r);
  return {
    name: 'slow: 150 countries, just under every threshold, each from a new address and device',
    short: 'slow',
    resends: 0,
    slow: true,
    perSecond: (config) => (regions.length * Math.max(0, newCountryHourly(config) - 1)) / 3600,
    next: (n) => ({ ...randomMobile(r, regions[n % regions.length] as CountryCode), signals: { ip: anyAddress(r), deviceId: `slow-${n}`, platform: 'web' } }),
  };
}

/** The sends an hour a client may make towards a country where it has no verified history (NEW_COUNTRY_LIMIT_COUNT). */
function newCountryHourly(config: Config): number {
  // With the cap off, the country's conversion sample is the threshold to stay under.
  return config.NEW_COUNTRY_LIMIT_COUNT > 0 ? config.NEW_COUNTRY_LIMIT_COUNT : config.MIN_CONVERSION_SAMPLE;
}

/**
 * The seventh: random numbers over all of one country's networks and many of their ranges, each create from a new
 * address abroad and a new device, and a fifth of the codes it gets verified by itself (it receives them: the numbers
 * are its own or its carrier's), to hold its conversion at MIN_CONVERSION, the middle of the 10-30 % issue 32 names.
 */
export function conversionHolder(seed = 23): Attack {
  const r = seeded(seed);
  return {
    name: "random numbers over one country's networks (+27, 8 ranges), each from a new address and device, 20 % of its codes verified by itself",
    short: 'verifies 20 %',
    resends: 0,
    verifies: 0.2,
    next: (n) => ({
      countryCode: '+27',
      phoneNumber: `0${zaRanges[r() % zaRanges.length]}${digits(r, 7)}`,
      signals: { ip: anyAddress(r), deviceId: `holder-${seed}-${n}`, platform: 'android' },
    }),
  };
}

/** The contract's four attacks, the slow one, the third from addresses in the country (6), and one that verifies a share of its codes (7). */
export const attacks = (): Attack[] => [sequentialWalk(), fewAddresses(), freshAddresses(), spreadWithResends(), slowSpread(), localProxies(), conversionHolder()];

/** A local Turnstile siteverify: a token a person solved (`solved-...`) passes, any other fails. */
async function startSiteverify(): Promise<{ readonly url: string; readonly server: http.Server }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const success = (new URLSearchParams(body).get('response') ?? '').startsWith('solved-');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success, 'error-codes': success ? [] : ['invalid-input-response'] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`, server };
}

/** An ordinary user: their number, device and where they connect from. */
interface User {
  readonly ask: Ask;
  /** The simulated second they last asked (a returning user is not picked again for 10 minutes). */
  lastAsked: number;
}

export async function simulatePumping(databaseUrl: string, settings: PumpingSettings, attack: Attack, log: (t: string) => void): Promise<PumpingRun> {
  const started = performance.now();
  // The warm-up is the day before: its sends are not today's quota, its hour not the conversion's.
  let simMs = Date.parse('2026-11-22T20:00:00Z');
  const clock = { now: () => new Date(simMs) };
  // Defaults for every fraud and phone limit; only the per-client request rate is off (one client asks for all).
  // The CAPTCHA variant's provider: a local siteverify that passes every token a person solved.
  const siteverify = settings.captchaWhenThrottled ? await startSiteverify() : null;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    CLIENT_RATE_LIMIT_PER_SECOND: '0',
    ...(siteverify && { TURNSTILE_VERIFY_URL: siteverify.url }),
    ...settings.serviceEnv,
  });
  const countries = addressCountriesOf(config.IP_COUNTRY_DATABASE);
  const addressCountry = countries && ((ip: string) => countries.countryOf(ip));
  for (const c of ordinaryCountries) {
    for (const block of [...c.home, c.nat]) {
      const found = addressCountry?.(`${block}.0.1`);
      if (found !== undefined && found !== c.region) throw new Error(`the simulation's ${c.region} addresses ${block}.0.0/16 are in ${found ?? 'no country'}`);
    }
  }
  const services = await createServices(config, pino({ level: 'silent' }), clock, cryptoRandom);
  services.dispatcher.connect({ sends: services.sendWorker, events: services.webhookWorker });
  const app = await buildApp(appDeps(services));
  try {
    const client = await services.clients.create('pumping simulation', ['otp:send', 'otp:verify']);
    if (siteverify) {
      const updated = await runAdminCommand(adminDeps(services), {
        name: 'clients.update',
        id: client.clientId,
        change: { captcha: { provider: 'turnstile', secret: 'pumping-simulation-secret', when: 'throttled' } },
      });
      if (!updated.ok) throw new Error(`CAPTCHA setting refused: ${JSON.stringify(updated)}`);
    }
    let token = '';
    const renewToken = async () => {
      const res = await app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope: 'otp:send otp:verify' },
      });
      token = (res.json() as { accessToken: string }).accessToken;
    };
    await renewToken();
    const headers = () => ({ authorization: `Bearer ${token}` });
    const create = (ask: Ask) => app.inject({ method: 'POST', url: '/v1/otp/request', headers: headers(), payload: ask });
    const resend = (id: string, captchaToken?: string) =>
      app.inject({ method: 'POST', url: `/v1/otp/${id}/resend`, headers: headers(), ...(captchaToken !== undefined && { payload: { captchaToken } }) });
    const verify = (v: { id: string; otp: string }) => app.inject({ method: 'POST', url: '/v1/otp/verify', headers: headers(), payload: v });

    const r = seeded(42);
    const ra = seeded(44);
    /** An address abroad: anywhere, as a proxy pool's, but not in the user's own country. */
    const anyAbroad = (g: Rng, region: string): string => {
      for (;;) {
        const ip = anyAddress(g);
        if (addressCountry?.(ip) !== region) return ip;
      }
    };
    /** Whether an ordinary user's address is outside their number's country. */
    const abroad = (ask: Ask): boolean => {
      const region = ordinaryCountries.find((c) => c.countryCode === ask.countryCode)?.region;
      return ask.signals !== undefined && addressCountry !== null && addressCountry(ask.signals.ip) !== region;
    };
    let userN = 0;
    const newUser = (): Ask => {
      for (;;) {
        let pick = r() % totalWeight;
        const ci = ordinaryCountries.findIndex((x) => (pick -= x.weight) < 0);
        const c = ordinaryCountries[ci] ?? ordinaryCountries[0];
        const phoneNumber = c.local(r);
        if (!parsePhone(c.countryCode, phoneNumber)) continue;
        userN += 1;
        const net = r() % homeNetworks;
        const atHome =
          r() % 1000 < settings.natShare * 1000
            ? `${c.nat}.0.${1 + (r() % natAddresses)}`
            : `${c.home[Math.floor(net / 256)] ?? c.home[0]}.${net % 256}.${1 + (r() % 254)}`;
        // A generator of its own, so that the users and their numbers are those of a run with nobody abroad.
        const ip = ra() % 1000 < (settings.abroadShare ?? 0) * 1000 ? anyAbroad(ra, c.region) : atHome;
        return { countryCode: c.countryCode, phoneNumber, signals: { ip, deviceId: `user-${userN}`, platform: r() % 2 === 0 ? 'android' : 'ios' } };
      }
    };
    /** Users who verified: they come back. */
    const returning: User[] = [];
    const returningUser = (t: number): Ask | null => {
      for (let tries = 0; tries < 20 && returning.length > 0; tries += 1) {
        const u = returning[r() % returning.length];
        if (u && t - u.lastAsked >= 600) {
          u.lastAsked = t;
          return u.ask;
        }
      }
      return null;
    };

    /** Codes ordinary users will type, by the simulated second they type them. */
    const toVerify = new Map<number, { id: string; otp: string; user: User | null }[]>();
    /** Ordinary users' resends, by the simulated second they are asked for: those left, and whether they then type the code. */
    const toResendOrdinary = new Map<number, { id: string; otp: string; user: User; left: number; verifies: boolean }[]>();
    // A generator of its own, so that the users, their numbers and who verifies are those of a run without resends.
    const rr = seeded(43);
    const later = <T,>(m: Map<number, T[]>, at: number, x: T) => m.set(at, [...(m.get(at) ?? []), x]);
    /** Attack resends, by the simulated second they are asked for. */
    const toResend = new Map<number, { id: string; left: number; firstMinute: boolean; own: boolean }[]>();
    const refreshEvery = conversionRefreshMs / 1000;
    const ordinary = { asked: 0, refused: 0, refusedByStatus: {} as Record<string, number>, captchaSolved: 0, resendsAsked: 0, resendsRefused: 0 };
    let solved = 0;
    const attackFirstMinute = { asked: 0, through: 0 };
    const attackAfter = { asked: 0, through: 0 };
    const attackAfterBy = { ownCreates: 0, ownResends: 0, otherCreates: 0, otherResends: 0 };
    const ownCountry = (countryCode: string) => ordinaryCountries.some((c) => c.countryCode === countryCode);
    const attackRefusedByStatus: Record<string, number> = {};
    const attackFactors: Record<string, number> = {};
    const ordinaryFactors: Record<string, number> = {};
    let attackVerified = 0;
    const ra7 = seeded(45);
    /** Counts the enforced risk factors of a refusal by factor and rule, as its error's details name them. */
    const countFactors = (into: Record<string, number>, res: { json: () => unknown }) => {
      const details = (res.json() as { error?: { details?: { factor?: string; rule?: string; mode?: string }[] } }).error?.details ?? [];
      for (const d of details) {
        if (d.factor === undefined || d.mode !== 'enforce') continue;
        const key = `${d.factor} (${d.rule ?? ''})`;
        into[key] = (into[key] ?? 0) + 1;
      }
    };
    /** The status, code and the limit's setting named in the message (IP_LIMIT_COUNT, MIN_CONVERSION...). */
    const statusOf = (res: { statusCode: number; json: () => unknown }) => {
      const body = res.json() as { message?: string; error?: { code?: string } };
      const setting = /\b([A-Z][A-Z_]{5,})\b/.exec(body.message ?? '')?.[1] ?? '';
      return `${res.statusCode} ${body.error?.code ?? ''} ${setting}`.trim();
    };

    /** One simulated second: ordinary creates and, when measuring, the attack's; then the codes typed. */
    /** The simulated second the attack starts at: its first minute is counted from it. */
    let attackStart = 0;
    const second = async (t: number, ordinaryNow: number, attackAsks: Ask[], measure: boolean, returningOn = measure) => {
      if (t % refreshEvery === 0) await services.conversion.refresh();
      if (t % 1800 === 0 && t > 0) await renewToken();
      const asks = [
        ...Array.from({ length: ordinaryNow }, () => {
          const back = returningOn && r() % 1000 < settings.returningShare * 1000 ? returningUser(t) : null;
          return { who: 'ordinary' as const, ask: back ?? newUser() };
        }),
        ...attackAsks.map((ask) => ({ who: 'attack' as const, ask })),
      ];
      const resends = toResend.get(t) ?? [];
      toResend.delete(t);
      const ordinaryResends = toResendOrdinary.get(t) ?? [];
      toResendOrdinary.delete(t);
      // A person asked for a CAPTCHA solves it and sends the create again with its token; a script does not.
      const createAsked = async (a: (typeof asks)[number]) => {
        const res = await create(a.ask);
        if (a.who !== 'ordinary' || res.statusCode !== 403 || !res.body.includes('CAPTCHA_REQUIRED')) return res;
        if (measure) ordinary.captchaSolved += 1;
        return create({ ...a.ask, captchaToken: `solved-${(solved += 1)}` });
      };
      const [answers, resent, ordinaryResent] = await Promise.all([
        Promise.all(asks.map(createAsked)),
        Promise.all(resends.map((x) => resend(x.id))),
        // A person asked for a CAPTCHA on a resend solves it too, and asks again with its token.
        Promise.all(
          ordinaryResends.map(async (x) => {
            const res = await resend(x.id);
            if (res.statusCode !== 403 || !res.body.includes('CAPTCHA_REQUIRED')) return res;
            if (measure) ordinary.captchaSolved += 1;
            return resend(x.id, `solved-${(solved += 1)}`);
          }),
        ),
      ]);
      ordinaryResent.forEach((res, i) => {
        const x = ordinaryResends[i];
        if (!x) return;
        if (measure) ordinary.resendsAsked += 1;
        if (res.statusCode !== 200) {
          // A user whose resend is refused has no code: a refused user, as one whose create is refused.
          if (measure) {
            ordinary.resendsRefused += 1;
            const key = `resend ${statusOf(res)}${abroad(x.user.ask) ? ' (abroad)' : ''}`;
            ordinary.refusedByStatus[key] = (ordinary.refusedByStatus[key] ?? 0) + 1;
            countFactors(ordinaryFactors, res);
          }
          return;
        }
        if (x.left > 1) later(toResendOrdinary, t + config.PHONE_COOLDOWN_SECONDS + (rr() % 31), { ...x, left: x.left - 1 });
        else if (x.verifies) later(toVerify, t + 5 + (rr() % 56), { id: x.id, otp: x.otp, user: x.user });
      });
      resent.forEach((res, i) => {
        const x = resends[i];
        if (!x) return;
        const bucket = x.firstMinute && t - attackStart < 60 ? attackFirstMinute : attackAfter;
        bucket.asked += 1;
        if (res.statusCode === 200) {
          bucket.through += 1;
          if (bucket === attackAfter) attackAfterBy[x.own ? 'ownResends' : 'otherResends'] += 1;
          if (x.left > 1) toResend.set(t + config.PHONE_COOLDOWN_SECONDS, [...(toResend.get(t + config.PHONE_COOLDOWN_SECONDS) ?? []), { ...x, left: x.left - 1 }]);
        } else {
          attackRefusedByStatus[`resend ${statusOf(res)}`] = (attackRefusedByStatus[`resend ${statusOf(res)}`] ?? 0) + 1;
          countFactors(attackFactors, res);
        }
      });
      answers.forEach((res, i) => {
        const a = asks[i];
        if (!a) return;
        const ok = res.statusCode === 200;
        if (a.who === 'attack') {
          const bucket = t - attackStart < 60 ? attackFirstMinute : attackAfter;
          bucket.asked += 1;
          if (ok) {
            bucket.through += 1;
            if (bucket === attackAfter) attackAfterBy[ownCountry(a.ask.countryCode) ? 'ownCreates' : 'otherCreates'] += 1;
            if (attack.resends > 0) {
              const at = t + config.PHONE_COOLDOWN_SECONDS;
              const id = (res.json() as { data: { id: string } }).data.id;
              toResend.set(at, [...(toResend.get(at) ?? []), { id, left: attack.resends, firstMinute: t - attackStart < 60, own: ownCountry(a.ask.countryCode) }]);
            }
            // It types its own codes as a person would, 5 to 60 s after asking.
            if (attack.verifies !== undefined && ra7() % 1000 < attack.verifies * 1000) {
              const data = (res.json() as { data: { id: string; otp: string } }).data;
              later(toVerify, t + 5 + (ra7() % 56), { id: data.id, otp: data.otp, user: null });
            }
          } else {
            attackRefusedByStatus[statusOf(res)] = (attackRefusedByStatus[statusOf(res)] ?? 0) + 1;
            countFactors(attackFactors, res);
          }
          return;
        }
        if (measure) ordinary.asked += 1;
        if (!ok) {
          if (measure) {
            ordinary.refused += 1;
            // A user abroad is told apart: the rules on where an address is fall on them first.
            const key = `${statusOf(res)}${abroad(a.ask) ? ' (abroad)' : ''}`;
            ordinary.refusedByStatus[key] = (ordinary.refusedByStatus[key] ?? 0) + 1;
            countFactors(ordinaryFactors, res);
          }
          return;
        }
        const verifies = r() % 1000 < settings.ordinaryVerifyShare * 1000;
        // Users type the code 5 to 60 s after asking.
        const at = verifies ? t + 5 + (r() % 56) : 0;
        const data = (res.json() as { data: { id: string; otp: string } }).data;
        const user = { ask: a.ask, lastAsked: t };
        // A user whose code is late asks again once the cool-down is over (30 to 60 s after), some a second
        // time, and types the code after their last resend if they type it at all.
        if (rr() % 1000 < (settings.resendShare ?? 0) * 1000) {
          const left = rr() % 1000 < (settings.secondResendShare ?? 0) * 1000 ? 2 : 1;
          later(toResendOrdinary, t + config.PHONE_COOLDOWN_SECONDS + (rr() % 31), { id: data.id, otp: data.otp, user, left, verifies });
        } else if (verifies) later(toVerify, at, { id: data.id, otp: data.otp, user });
      });
      const typing = toVerify.get(t) ?? [];
      toVerify.delete(t);
      const verified = await Promise.all(typing.map((v) => verify({ id: v.id, otp: v.otp })));
      verified.forEach((res, i) => {
        const v = typing[i];
        if (v?.user === null) {
          if (res.statusCode === 200) attackVerified += 1;
          return;
        }
        // A new user who verified is a user who may come back; a returning one is already known.
        if (v && res.statusCode === 200 && !returning.some((u) => u.ask === v.user?.ask)) returning.push(v.user);
      });
    };

    // The day before: users sign up at the ordinary rate, and most verify. No attack.
    const warmUpSeconds = Math.ceil(settings.warmUpUsers / settings.ordinaryPerSecond) + 61;
    let carry = 0;
    for (let t = 0; t < warmUpSeconds; t += 1) {
      carry += t < warmUpSeconds - 61 ? settings.ordinaryPerSecond : 0;
      const now = Math.floor(carry);
      carry -= now;
      await second(t, now, [], false);
      simMs += 1000;
    }
    log(`pumping (${attack.short}): warm-up done, ${returning.length} users verified on the day before`);
    // The next morning: signal windows and the conversion hour hold nothing of the warm-up.
    simMs = Date.parse('2026-11-23T08:00:00Z');
    toVerify.clear();
    toResendOrdinary.clear();
    for (const u of returning) u.lastAsked = -600;
    await renewToken();

    let attackN = 0;
    let ordinaryCarry = 0;
    let attackCarry = 0;
    const attackRate = attack.perSecond?.(config, settings) ?? settings.attackPerSecond;
    const seconds = settings.minutes * 60;
    // Ordinary users alone first, when asked: returning and new, as in the attack's minutes, not counted.
    attackStart = (settings.leadMinutes ?? 0) * 60;
    for (let t = 0; t < attackStart; t += 1) {
      ordinaryCarry += settings.ordinaryPerSecond;
      const ordinaryNow = Math.floor(ordinaryCarry);
      ordinaryCarry -= ordinaryNow;
      await second(t, ordinaryNow, [], false, true);
      simMs += 1000;
    }
    if (attackStart > 0) log(`pumping (${attack.short}): ${settings.leadMinutes ?? 0} minutes of ordinary traffic before the attack`);
    for (let t = attackStart; t < attackStart + seconds; t += 1) {
      ordinaryCarry += settings.ordinaryPerSecond;
      attackCarry += attackRate;
      const ordinaryNow = Math.floor(ordinaryCarry);
      const attackNow = Math.floor(attackCarry);
      ordinaryCarry -= ordinaryNow;
      attackCarry -= attackNow;
      await second(t, ordinaryNow, Array.from({ length: attackNow }, () => attack.next(attackN++)), true);
      simMs += 1000;
      if ((t - attackStart) % 300 === 299) log(`pumping (${attack.short}): ${Math.round((t - attackStart + 1) / 60)} of ${settings.minutes} simulated minutes`);
    }
    const now = clock.now();
    const attackSends = attackFirstMinute.through + attackAfter.through;
    return {
      attack: attack.name,
      ordinary,
      attackFirstMinute,
      attackAfter,
      attackAfterBy,
      attackSends,
      attackSendsPerHour: Math.round((attackSends * 60) / settings.minutes),
      attackRefusedByStatus,
      attackFactors,
      ordinaryFactors,
      ...(attack.verifies !== undefined && { attackVerified }),
      prefixBlocks: (await services.prefixBlocks.list(now)).length,
      countryThrottles: (await services.conversionStore.active(now)).map(
        (x) => `${x.regionCode}${x.network === '' ? '' : ` ${x.network}`} via ${x.provider} (${x.verified}/${x.sends} verified)`,
      ),
      clientThrottled: (await services.conversionStore.activeClients(now)).some((x) => x.clientId === client.clientId),
      wallSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    siteverify?.server.close();
    await app.close();
    await services.sendWorker.stop();
    await services.webhookWorker.close();
    await services.providers.stop();
    await services.db.close();
  }
}
