import { setTimeout as sleep } from 'node:timers/promises';
import { CarrierChecker, defaultCarrierCacheEntries, type CarrierCheckObserver, type CarrierChecks, type Wait } from '../domain/carrier-checks.js';
import type { Clock } from '../domain/ports.js';
import type { HttpBaseUrl } from '../providers/http-provider.js';
import { twilio } from '../providers/twilio.js';
import { CamaraApi } from './camara-api.js';
import { CamaraCallForwarding } from './camara-call-forwarding.js';
import { CamaraSimSwap } from './camara-sim-swap.js';
import { CamaraToken, type CamaraCredentials } from './camara-token.js';
import { TwilioSimSwap, type TwilioAccount } from './twilio-sim-swap.js';

/** The carrier checks as configured (contract 18): which peer answers each, and what they need. */
export interface CarrierSettings {
  readonly simSwap: 'camara' | 'twilio' | null;
  readonly callForwarding: 'camara' | null;
  /** Set when a check is camara's. */
  readonly camara: (CamaraCredentials & { readonly base: HttpBaseUrl }) | null;
  /** Set when SIM_SWAP_PROVIDER is twilio: the Twilio provider's own account settings, read as it reads them. */
  readonly twilio: (TwilioAccount & { readonly base: HttpBaseUrl }) | null;
  readonly maxAgeHours: number;
  readonly cacheSeconds: number;
  readonly timeoutMs: number;
}

/** The parsed settings that bear on the carrier checks; what is missing or wrong goes to `problems`. */
export function carrierSettingsOf(out: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]): CarrierSettings {
  const simSwap = out.SIM_SWAP_PROVIDER === 'camara' || out.SIM_SWAP_PROVIDER === 'twilio' ? out.SIM_SWAP_PROVIDER : null;
  const callForwarding = out.CALL_FORWARDING_PROVIDER === 'camara' ? 'camara' : null;
  let camara: CarrierSettings['camara'] = null;
  if (simSwap === 'camara' || callForwarding === 'camara') {
    const needs = simSwap === 'camara' ? 'SIM_SWAP_PROVIDER=camara' : 'CALL_FORWARDING_PROVIDER=camara';
    const missing = ['CAMARA_BASE_URL', 'CAMARA_TOKEN_URL', 'CAMARA_CLIENT_ID', 'CAMARA_CLIENT_SECRET'].filter((k) => out[k] === undefined);
    for (const key of missing) problems.push(`${key}: required by ${needs}`);
    if (missing.length === 0) {
      camara = {
        base: out.CAMARA_BASE_URL as HttpBaseUrl,
        tokenUrl: String(out.CAMARA_TOKEN_URL),
        clientId: String(out.CAMARA_CLIENT_ID),
        clientSecret: String(out.CAMARA_CLIENT_SECRET),
      };
    }
  }
  return {
    simSwap,
    callForwarding,
    camara,
    twilio: simSwap === 'twilio' ? twilioAccount(out, env, problems) : null,
    maxAgeHours: Number(out.SIM_SWAP_MAX_AGE_HOURS),
    cacheSeconds: Number(out.CARRIER_CHECK_CACHE_SECONDS),
    timeoutMs: Number(out.CARRIER_CHECK_TIMEOUT_MS),
  };
}

/** TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN, parsed by the Twilio provider's own settings (one declaration of each). */
function twilioAccount(out: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]): CarrierSettings['twilio'] {
  const read = (key: 'TWILIO_ACCOUNT_SID' | 'TWILIO_AUTH_TOKEN'): string | null => {
    const raw = env[key];
    if (raw === undefined || raw === '') {
      problems.push(`${key}: required by SIM_SWAP_PROVIDER=twilio`);
      return null;
    }
    try {
      return twilio.settings[key].parse(raw);
    } catch (err) {
      problems.push(`${key}: ${(err as Error).message}`);
      return null;
    }
  };
  const accountSid = read('TWILIO_ACCOUNT_SID');
  const authToken = read('TWILIO_AUTH_TOKEN');
  return accountSid === null || authToken === null ? null : { base: out.TWILIO_LOOKUPS_BASE_URL as HttpBaseUrl, accountSid, authToken };
}

/** Resolves after `ms` or when `signal` aborts, whichever comes first. */
const realWait: Wait = (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined);

/** The configured checks, each with its peer, per-number answers and time bound; none when none is configured. */
export function configuredCarrierChecks(settings: CarrierSettings, clock: Clock, observer: CarrierCheckObserver): CarrierChecks {
  const deps = {
    clock,
    policy: { cacheSeconds: settings.cacheSeconds, timeoutMs: settings.timeoutMs, maxEntries: defaultCarrierCacheEntries },
    wait: realWait,
    observer,
  };
  // One token and one pool for both CAMARA checks.
  const scopes = [...(settings.simSwap === 'camara' ? [CamaraSimSwap.scope] : []), ...(settings.callForwarding === 'camara' ? [CamaraCallForwarding.scope] : [])];
  const camara = settings.camara && new CamaraApi(settings.camara.base, new CamaraToken(settings.camara, clock, scopes));
  const simSwap =
    settings.simSwap === 'camara' && camara
      ? new CamaraSimSwap(camara, settings.maxAgeHours)
      : settings.simSwap === 'twilio' && settings.twilio
        ? new TwilioSimSwap(settings.twilio.base, settings.twilio)
        : null;
  const callForwarding = settings.callForwarding === 'camara' && camara ? new CamaraCallForwarding(camara) : null;
  return {
    ...(simSwap && { simSwap: new CarrierChecker('sim_swap', simSwap, deps) }),
    ...(callForwarding && { callForwarding: new CarrierChecker('call_forwarding', callForwarding, deps) }),
  };
}
