/**
 * The pumping simulation (issue 12): ordinary users, most of whom verify, mixed with SMS pumping, through the
 * service's own HTTP app and a real PostgreSQL, on a simulated clock (an hour's fraud rules in a minute or so).
 * The fraud settings are the defaults; what is measured is who gets a code, not how fast.
 */
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { parsePhone } from '../../src/domain/phone.js';
import { cryptoRandom } from '../../src/domain/random.js';
import { conversionRefreshMs } from '../../src/jobs/workers.js';
import { buildApp } from '../../src/http/app.js';
import { appDeps } from '../../src/server.js';
import { createServices } from '../../src/services.js';

export interface PumpingSettings {
  /** Simulated minutes. */
  readonly minutes: number;
  /** Ordinary creates per simulated second, and the share of them verified. */
  readonly ordinaryPerSecond: number;
  readonly ordinaryVerifyShare: number;
  /** Attack creates per simulated second (never verified). */
  readonly attackPerSecond: number;
}

/** Who asked, who got a code, who was refused, for one attack. */
export interface PumpingRun {
  readonly attack: string;
  readonly ordinary: { readonly asked: number; readonly refused: number; readonly refusedByStatus: Record<string, number> };
  readonly attackFirstMinute: { readonly asked: number; readonly through: number };
  readonly attackAfter: { readonly asked: number; readonly through: number };
  /** Throttles and blocks in force at the end. */
  readonly prefixBlocks: number;
  readonly countryThrottles: string[];
  readonly wallSeconds: number;
}

export interface PumpingResults {
  readonly settings: PumpingSettings;
  readonly runs: PumpingRun[];
}

/** Where ordinary users live, with how a random mobile number of each reads locally. */
const ordinaryCountries = [
  { countryCode: '+234', weight: 4, local: (r: () => number) => `080${3 + (r() % 4)}${digits(r, 7)}` },
  { countryCode: '+233', weight: 2, local: (r: () => number) => `024${digits(r, 7)}` },
  { countryCode: '+254', weight: 2, local: (r: () => number) => `07${10 + (r() % 30)}${digits(r, 6)}` },
  { countryCode: '+27', weight: 2, local: (r: () => number) => `082${digits(r, 7)}` },
] as const;

function digits(r: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i += 1) s += String(r() % 10);
  return s;
}

/** A small seeded generator: the same users and attack every run. */
function seeded(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % 1_000_000_007;
  };
}

/** An attack: the number (country code and local digits) of its n-th create. */
export interface Attack {
  readonly name: string;
  number(n: number): { readonly countryCode: string; readonly phoneNumber: string };
}

/** The attack: sequential numbers of a few ranges (here 3 of +234 803 555 x), round-robin. */
export const sequentialWalk: Attack = {
  name: 'sequential numbers of 3 prefixes (+234803555{0,1,2}xxx)',
  number: (n) => ({ countryCode: '+234', phoneNumber: `0803555${n % 3}${String(Math.floor(n / 3) % 1000).padStart(3, '0')}` }),
};

/**
 * An attack that prefix velocity alone cannot see: random numbers all over one country's ranges (South Africa,
 * where a fifth of the ordinary users live), never two in a range; only conversion catches it.
 */
export function scatteredNumbers(seed = 7): Attack {
  const r = seeded(seed);
  return { name: 'scattered numbers of one country (+27 82 random)', number: () => ({ countryCode: '+27', phoneNumber: `082${digits(r, 7)}` }) };
}

export async function simulatePumping(databaseUrl: string, settings: PumpingSettings, attack: Attack, log: (t: string) => void): Promise<PumpingRun> {
  const started = performance.now();
  let simMs = Date.parse('2026-11-23T08:00:00Z');
  const clock = { now: () => new Date(simMs) };
  // Defaults for every fraud and phone limit; only the per-client request rate is off (one client asks for all).
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, CLIENT_RATE_LIMIT_PER_SECOND: '0' });
  const services = await createServices(config, pino({ level: 'silent' }), clock, cryptoRandom);
  services.dispatcher.connect({ sends: services.sendWorker, events: services.webhookWorker });
  const app = await buildApp(appDeps(services));
  try {
    const client = await services.clients.create('pumping simulation', ['otp:send', 'otp:verify']);
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
    const create = (body: { countryCode: string; phoneNumber: string }) =>
      app.inject({ method: 'POST', url: '/v1/otp/request', headers: { authorization: `Bearer ${token}` }, payload: body });

    const r = seeded(42);
    const totalWeight = ordinaryCountries.reduce((sum, c) => sum + c.weight, 0);
    const ordinaryNumber = (): { countryCode: string; phoneNumber: string } => {
      for (;;) {
        let pick = r() % totalWeight;
        const c = ordinaryCountries.find((x) => (pick -= x.weight) < 0) ?? ordinaryCountries[0];
        const phoneNumber = c.local(r);
        if (parsePhone(c.countryCode, phoneNumber)) return { countryCode: c.countryCode, phoneNumber };
      }
    };

    const ordinary = { asked: 0, refused: 0, refusedByStatus: {} as Record<string, number> };
    const attackFirstMinute = { asked: 0, through: 0 };
    const attackAfter = { asked: 0, through: 0 };
    /** Codes ordinary users will type, by the simulated second they type them. */
    const toVerify = new Map<number, { id: string; otp: string }[]>();
    let attackN = 0;
    let ordinaryCarry = 0;
    let attackCarry = 0;
    const seconds = settings.minutes * 60;
    const refreshEvery = conversionRefreshMs / 1000;

    for (let t = 0; t < seconds; t += 1) {
      if (t % refreshEvery === 0) await services.conversion.refresh();
      // A token lasts an hour of the simulated clock.
      if (t % 1800 === 0 && t > 0) await renewToken();
      ordinaryCarry += settings.ordinaryPerSecond;
      attackCarry += settings.attackPerSecond;
      const ordinaryNow = Math.floor(ordinaryCarry);
      const attackNow = Math.floor(attackCarry);
      ordinaryCarry -= ordinaryNow;
      attackCarry -= attackNow;
      const asks = [
        ...Array.from({ length: ordinaryNow }, () => ({ who: 'ordinary' as const, body: ordinaryNumber() })),
        ...Array.from({ length: attackNow }, () => ({ who: 'attack' as const, body: attack.number(attackN++) })),
      ];
      const answers = await Promise.all(asks.map((a) => create(a.body)));
      answers.forEach((res, i) => {
        const ask = asks[i];
        if (!ask) return;
        const ok = res.statusCode === 200;
        if (ask.who === 'attack') {
          const bucket = t < 60 ? attackFirstMinute : attackAfter;
          bucket.asked += 1;
          if (ok) bucket.through += 1;
          return;
        }
        ordinary.asked += 1;
        if (!ok) {
          ordinary.refused += 1;
          const key = `${res.statusCode} ${(res.json() as { error?: { code?: string } }).error?.code ?? ''}`.trim();
          ordinary.refusedByStatus[key] = (ordinary.refusedByStatus[key] ?? 0) + 1;
          return;
        }
        if (r() % 1000 < settings.ordinaryVerifyShare * 1000) {
          // Users type the code 5 to 60 s after asking.
          const at = t + 5 + (r() % 56);
          const data = (res.json() as { data: { id: string; otp: string } }).data;
          toVerify.set(at, [...(toVerify.get(at) ?? []), data]);
        }
      });
      const typing = toVerify.get(t) ?? [];
      toVerify.delete(t);
      await Promise.all(
        typing.map((v) =>
          app.inject({ method: 'POST', url: '/v1/otp/verify', headers: { authorization: `Bearer ${token}` }, payload: { id: v.id, otp: v.otp } }),
        ),
      );
      simMs += 1000;
      if (t % 300 === 299) log(`pumping (${attack.name}): ${Math.round((t + 1) / 60)} of ${settings.minutes} simulated minutes`);
    }
    const now = clock.now();
    const run: PumpingRun = {
      attack: attack.name,
      ordinary,
      attackFirstMinute,
      attackAfter,
      prefixBlocks: (await services.prefixBlocks.list(now)).length,
      countryThrottles: (await services.conversionStore.active(now)).map((x) => `${x.regionCode} via ${x.provider} (${x.verified}/${x.sends} verified)`),
      wallSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
    return run;
  } finally {
    await app.close();
    await services.sendWorker.stop();
    await services.webhookWorker.close();
    await services.providers.stop();
    await services.db.close();
  }
}
