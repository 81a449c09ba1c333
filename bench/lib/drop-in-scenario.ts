import { runLoad, warmUp, type LoadOptions, type LoadResult } from './load.js';
import { PhoneSequence } from './phones.js';
import { seededId, seedOtp } from './seed.js';
import { benchCreate, benchVerify, type ScenarioSettings, type ServiceTarget } from './service-scenarios.js';

/** The drop-in comparison: create and check through Twilio's /v2 against the same operations through /v1. */
export interface DropInResults {
  readonly v1Create: LoadResult;
  readonly v2Create: LoadResult;
  readonly v1Check: LoadResult;
  readonly v2Check: LoadResult;
  readonly rounds: number;
  /**
   * Both at once, half the connections each, for one round's time: whatever else the machine does then weighs on
   * both sides in the same instant, so the ratio holds under noise that alternating rounds only evens out.
   */
  readonly sideBySide: { readonly v1Create: LoadResult; readonly v2Create: LoadResult; readonly v1Check: LoadResult; readonly v2Check: LoadResult };
}

export interface DropInSettings extends ScenarioSettings {
  /** Short rounds per side, the order alternating from round to round, summed. */
  readonly rounds: number;
  /** Start the first round with /v2 (else /v1). */
  readonly v2First: boolean;
  /** PENDING verifications (code seedOtp) seeded per check side: series `a` for /v1, `b` for /v2. */
  readonly pool: number;
  /** Where each side's phone numbers start, so that no create meets another's number. */
  readonly v1PhoneOffset: number;
  readonly v2PhoneOffset: number;
}

/**
 * Contract 15's target, measured: /v2 create and check at least 0.9x /v1's, on one service with the same
 * connections. Other work on a shared machine drifts over a run, so each pair is measured in `rounds` short rounds
 * whose order alternates (noise hits both sides), and the rounds are summed. /v2 authenticates each request with
 * HTTP Basic (the client's secret), /v1 with a bearer token fetched once, as their callers do.
 */
export async function benchDropIn(target: ServiceTarget, s: DropInSettings): Promise<DropInResults> {
  const hex = target.clientId.replace(/-/g, '');
  const basic = `Basic ${Buffer.from(`AC${hex}:${target.clientSecret}`).toString('base64')}`;
  const service = `/v2/Services/VA${hex}`;
  const measured = async (options: LoadOptions): Promise<LoadResult> => {
    if (s.warmUpSeconds > 0) await warmUp(options, s.warmUpSeconds);
    return runLoad(options);
  };
  const form = (path: string, body: () => string, t: ScenarioSettings = s): LoadOptions => ({
    url: target.url,
    connections: t.connections,
    seconds: t.seconds,
    method: 'POST',
    path: `${service}/${path}`,
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    setup: (req) => ({ ...req, body: body() }),
  });
  const v1Phones = new PhoneSequence(s.v1PhoneOffset);
  const v2Phones = new PhoneSequence(s.v2PhoneOffset);
  let a = 0;
  let b = 0;
  const pairs = async (v1: () => Promise<LoadResult>, v2: () => Promise<LoadResult>): Promise<[LoadResult, LoadResult]> => {
    const ones: LoadResult[] = [];
    const twos: LoadResult[] = [];
    for (let i = 0; i < s.rounds; i++) {
      if ((i % 2 === 0) !== s.v2First) {
        ones.push(await v1());
        twos.push(await v2());
      } else {
        twos.push(await v2());
        ones.push(await v1());
      }
    }
    return [sumRounds(ones), sumRounds(twos)];
  };
  const v1Create = (t: ScenarioSettings) => async () => (await benchCreate(target, v1Phones, t)).result;
  const v2Create = (t: ScenarioSettings) => () =>
    measured(form('Verifications', () => new URLSearchParams({ To: `+234${v2Phones.take().slice(1)}`, Channel: 'sms' }).toString(), t));
  const v1Check = (t: ScenarioSettings) => () => benchVerify(target, () => (a < s.pool ? { id: seededId('a', a++), otp: seedOtp } : null), t);
  const v2Check = (t: ScenarioSettings) => () =>
    measured(
      form(
        'VerificationCheck',
        () => new URLSearchParams({ VerificationSid: `VE${seededId('b', Math.min(b++, s.pool - 1)).replace(/-/g, '')}`, Code: seedOtp }).toString(),
        t,
      ),
    );
  const half: ScenarioSettings = { ...s, connections: Math.max(1, Math.floor(s.connections / 2)) };
  const together = async (one: () => Promise<LoadResult>, two: () => Promise<LoadResult>) => Promise.all([one(), two()]);
  const [c1, c2] = await pairs(v1Create(s), v2Create(s));
  const [sc1, sc2] = await together(v1Create(half), v2Create(half));
  const [k1, k2] = await pairs(v1Check(s), v2Check(s));
  const [sk1, sk2] = await together(v1Check(half), v2Check(half));
  return { v1Create: c1, v2Create: c2, v1Check: k1, v2Check: k2, rounds: s.rounds, sideBySide: { v1Create: sc1, v2Create: sc2, v1Check: sk1, v2Check: sk2 } };
}

/** Rounds summed: rates over the whole time, statuses added, latency the worst round's. */
export function sumRounds(results: LoadResult[]): LoadResult {
  const seconds = results.reduce((n, r) => n + r.seconds, 0);
  const responses = results.reduce((n, r) => n + r.responses, 0);
  const ok = results.reduce((n, r) => n + r.okRps * r.seconds, 0);
  const statuses: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    rps: responses / seconds,
    okRps: ok / seconds,
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    responses,
    statuses,
    errors: results.reduce((n, r) => n + r.errors, 0),
    seconds,
  };
}

/** The markdown lines `bench:drop-in` prints. */
export function dropInTable(r: DropInResults, heading: string): string {
  const row = (name: string, v1: LoadResult, v2: LoadResult) =>
    `| ${name} | ${v1.okRps.toFixed(0)} | ${v2.okRps.toFixed(0)} | ${(v2.okRps / v1.okRps).toFixed(2)}x | ${v1.p99} / ${v2.p99} | ${JSON.stringify(v2.statuses)} |`;
  return [
    heading,
    '| operation | /v1 ok/s | /v2 ok/s | /v2 vs /v1 | p99 ms /v1 / /v2 | /v2 statuses |',
    '|---|---|---|---|---|---|',
    row('create, alternating rounds', r.v1Create, r.v2Create),
    row('create, side by side', r.sideBySide.v1Create, r.sideBySide.v2Create),
    row('check, alternating rounds', r.v1Check, r.v2Check),
    row('check, side by side', r.sideBySide.v1Check, r.sideBySide.v2Check),
    '',
  ].join('\n');
}
