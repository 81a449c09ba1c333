import { runLoad, warmUp, type LoadOptions, type LoadResult } from './load.js';
import { PhoneSequence } from './phones.js';

/** The service under test and a token of its bench client. */
export interface ServiceTarget {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly token: string;
}

/** A verification and its code, as the create response showed them. */
export interface Created {
  readonly id: string;
  readonly otp: string;
}

export interface ScenarioSettings {
  readonly connections: number;
  readonly seconds: number;
  readonly warmUpSeconds: number;
}

/** The form every token benchmark sends: client_secret_post, the same two scopes on both servers. */
export function tokenForm(clientId: string, clientSecret: string): string {
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
    scope: 'otp:send otp:verify',
  }).toString();
}

export async function fetchToken(url: string, clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: tokenForm(clientId, clientSecret),
  });
  const body: unknown = await res.json();
  const token = typeof body === 'object' && body !== null ? (body as { access_token?: unknown }).access_token : null;
  if (res.status !== 200 || typeof token !== 'string') {
    throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  }
  return token;
}

async function measured(options: LoadOptions, s: ScenarioSettings): Promise<LoadResult> {
  if (s.warmUpSeconds > 0) await warmUp(options, s.warmUpSeconds);
  return runLoad(options);
}

/** POST of a constant client-credentials form to a token endpoint (ours or a peer's). */
export async function benchTokenEndpoint(
  url: string,
  path: string,
  form: string,
  s: ScenarioSettings,
): Promise<LoadResult> {
  return measured(
    {
      url,
      connections: s.connections,
      seconds: s.seconds,
      method: 'POST',
      path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    },
    s,
  );
}

/** The end users' addresses and devices the creates of this bench process have used so far. */
let signalCount = 0;

/** POST /v1/otp/request with a new phone number on every request; collects the created ids and codes. */
export async function benchCreate(
  t: ServiceTarget,
  phones: PhoneSequence,
  s: ScenarioSettings,
  webhookUrl: string | null = null,
): Promise<{ result: LoadResult; created: Created[] }> {
  const created: Created[] = [];
  // Signals on every create (contract 14), as a client's backend sends them: each from its own address (its own
  // /24 too) and device, so that the signal limits are read and counted on every create but never reached (the
  // count goes on across runs: a later run on the same service sends no address or device again).
  const signals = () => {
    const n = (signalCount += 1);
    return {
      ip: `${10 + ((n >> 24) & 127)}.${n & 255}.${(n >> 8) & 255}.${(n >> 16) & 255}`,
      deviceId: `bench-device-${n}`,
      userAgent: 'Mozilla/5.0 (Linux; Android 14) bench',
      platform: 'android',
    };
  };
  const body = (phone: string) =>
    JSON.stringify({ countryCode: '+234', phoneNumber: phone, ...(webhookUrl && { webhookUrl }), signals: signals() });
  const result = await measured(
    {
      url: t.url,
      connections: s.connections,
      seconds: s.seconds,
      method: 'POST',
      path: '/v1/otp/request',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      setup: (req) => ({ ...req, body: body(phones.take()) }),
      onResponse: (status, text) => {
        if (status !== 200) return;
        const record = dataOf(text);
        if (record) created.push(record);
      },
    },
    s,
  );
  return { result, created };
}

/** GET /v1/otp/{id} over a spread of ids. */
export async function benchFetch(t: ServiceTarget, nextId: () => string, s: ScenarioSettings): Promise<LoadResult> {
  return measured(
    {
      url: t.url,
      connections: s.connections,
      seconds: s.seconds,
      method: 'GET',
      path: '/v1/otp/00000000-0000-0000-0000-000000000000',
      headers: { authorization: `Bearer ${t.token}` },
      setup: (req) => ({ ...req, path: `/v1/otp/${nextId()}` }),
    },
    s,
  );
}

/**
 * POST /v1/otp/verify with the right code, each request on a PENDING verification not verified before, so
 * every call does the real update and outbox insert. When `next` runs dry, it repeats `fallback` (409s).
 */
export async function benchVerify(
  t: ServiceTarget,
  next: () => Created | null,
  s: ScenarioSettings,
  extra: Partial<Pick<LoadOptions, 'amount' | 'overallRate' | 'onResponse'>> = {},
  warm = true,
): Promise<LoadResult> {
  let last: Created = { id: '00000000-0000-0000-0000-000000000000', otp: '000000' };
  const options: LoadOptions = {
    url: t.url,
    connections: s.connections,
    seconds: s.seconds,
    method: 'POST',
    path: '/v1/otp/verify',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    setup: (req, context) => {
      last = next() ?? last;
      context.id = last.id;
      return { ...req, body: JSON.stringify({ id: last.id, otp: last.otp }) };
    },
    ...extra,
  };
  return warm ? measured(options, s) : runLoad(options);
}

/** {id, otp} of the envelope's data, or null. */
function dataOf(text: string): Created | null {
  try {
    const parsed: unknown = JSON.parse(text);
    const data: unknown = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : null;
    if (typeof data !== 'object' || data === null) return null;
    const { id, otp } = data as { id?: unknown; otp?: unknown };
    return typeof id === 'string' && typeof otp === 'string' ? { id, otp } : null;
  } catch {
    return null;
  }
}
