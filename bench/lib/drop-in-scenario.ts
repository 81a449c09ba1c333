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
  const form = (path: string, body: () => string): LoadOptions => ({
    url: target.url,
    connections: s.connections,
    seconds: s.seconds,
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
  const [v1Create, v2Create] = await pairs(
    async () => (await benchCreate(target, v1Phones, s)).result,
    () => measured(form('Verifications', () => new URLSearchParams({ To: `+234${v2Phones.take().slice(1)}`, Channel: 'sms' }).toString())),
  );
  const [v1Check, v2Check] = await pairs(
    () => benchVerify(target, () => (a < s.pool ? { id: seededId('a', a++), otp: seedOtp } : null), s),
    () =>
      measured(
        form('VerificationCheck', () =>
          new URLSearchParams({ VerificationSid: `VE${seededId('b', Math.min(b++, s.pool - 1)).replace(/-/g, '')}`, Code: seedOtp }).toString(),
        ),
      ),
  );
  return { v1Create, v2Create, v1Check, v2Check, rounds: s.rounds };
}

/** Rounds summed: rates over the whole time, statuses added, latency the worst round's. */
function sumRounds(results: LoadResult[]): LoadResult {
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
    row('create', r.v1Create, r.v2Create),
    row('check', r.v1Check, r.v2Check),
    '',
  ].join('\n');
}
