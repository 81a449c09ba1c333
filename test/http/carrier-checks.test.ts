import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import type { AdminCommand } from '../../src/admin/commands.js';
import { e164Of, expectV1Error, nextLocalNumber, operatorCommand, sendCounts, type RecordBody } from '../support/api.js';
import { camaraCallForwardingSpec, camaraSimSwapSpec, startCamaraPrism } from '../support/camara-spec.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startPrism, type PrismMock } from '../support/prism.js';
import { repoRoot } from '../support/processes.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

/**
 * Contract 18's carrier checks, through the HTTP app. Prism serves CAMARA's SIM Swap and Call Forwarding Signal
 * descriptions (test/peers/camara) and Twilio's Lookup v2 description, and refuses any request they do not allow.
 * A small proxy in front of them picks, per number, which documented answer Prism gives (`Prefer`), or gives none
 * at all; a local token endpoint hands out the CAMARA client-credentials token.
 */

/** What the peers say of a number: flagged (swapped, forwarded), clear, an error answer, or nothing. */
type Answer = 'flagged' | 'clear' | 'fail' | 'silence';
const answers = new Map<string, Answer>();
/** The checks each number was asked, in order: `sim_swap` or `call_forwarding`. */
const asked: { readonly check: string; readonly e164: string; readonly body: string; readonly url: string }[] = [];
const problems: string[] = [];
const hanging = new Set<http.ServerResponse>();
let tokenRequests = 0;

const camaraClient = { id: 'otp-service-client', secret: 'camara-secret-1234' };
const accessToken = 'camara-access-token-1';
const twilioAccount = { sid: `AC${'0123456789abcdef'.repeat(2)}`, token: 'twilio-auth-token-5678' };

let simSwapPrism: PrismMock;
let forwardingPrism: PrismMock;
let lookupsPrism: PrismMock;
let proxy: http.Server;
let proxyUrl: string;
let tokenEndpoint: Receiver;
let siteverify: Receiver;

/** The documented answer Prism is asked for, per check and answer. */
const examples: Record<string, Record<'flagged' | 'clear', string>> = {
  sim_swap: { flagged: 'SWAPPED', clear: 'NOT_SWAPPED' },
  call_forwarding: { flagged: 'ACTIVE', clear: 'INACTIVE' },
  twilio: { flagged: 'fetchSimSwap', clear: 'fetchSimSwapWithFalseSwapped' },
};

before(async () => {
  [simSwapPrism, forwardingPrism, lookupsPrism] = await Promise.all([
    startCamaraPrism(camaraSimSwapSpec, '/check', { SWAPPED: { swapped: true }, NOT_SWAPPED: { swapped: false } }),
    startCamaraPrism(camaraCallForwardingSpec, '/unconditional-call-forwardings', { ACTIVE: { active: true }, INACTIVE: { active: false } }),
    startPrism(`${repoRoot}/node_modules/@twilio-alpha/mcp/twilio-oai/spec/json/twilio_lookups_v2.json`),
  ]);
  tokenEndpoint = await startReceiver((req, res) => {
    tokenRequests += 1;
    const basic = `Basic ${Buffer.from(`${camaraClient.id}:${camaraClient.secret}`).toString('base64')}`;
    const form = new URLSearchParams(req.body);
    // The scopes of both checks' operations, as their descriptions name them.
    const scopes = (form.get('scope') ?? '').split(' ').sort().join(' ');
    if (scopes !== 'call-forwarding-signal:unconditional-call-forwardings:read sim-swap:check') problems.push(`token request scopes: ${scopes}`);
    if (req.method !== 'POST' || req.headers.authorization !== basic || form.get('grant_type') !== 'client_credentials') {
      problems.push(`token request: ${req.method} ${String(req.headers['content-type'])} ${req.body}`);
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 3600 }));
  });
  siteverify = await startReceiver((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}'));
  proxy = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => void forward(req, res, body).catch((err: unknown) => res.writeHead(502).end(String(err))));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

after(async () => {
  for (const res of hanging) res.destroy();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await Promise.all([simSwapPrism.stop(), forwardingPrism.stop(), lookupsPrism.stop(), tokenEndpoint.close(), siteverify.close()]);
});

/** Sends the service's request on to the Prism of its path, asking for the answer the test chose for the number. */
async function forward(req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
  const url = req.url ?? '';
  const twilio = url.startsWith('/v2/PhoneNumbers/');
  const check = twilio ? 'twilio' : url.startsWith('/sim-swap/') ? 'sim_swap' : 'call_forwarding';
  const e164 = twilio ? decodeURIComponent(url.slice('/v2/PhoneNumbers/'.length).split('?')[0] ?? '') : String((JSON.parse(body || '{}') as { phoneNumber?: unknown }).phoneNumber);
  asked.push({ check: check === 'twilio' ? 'sim_swap' : check, e164, body, url });
  const expected = twilio ? `Basic ${Buffer.from(`${twilioAccount.sid}:${twilioAccount.token}`).toString('base64')}` : `Bearer ${accessToken}`;
  if (req.headers.authorization !== expected) problems.push(`${url}: authorization ${String(req.headers.authorization)}`);
  const answer = answers.get(e164) ?? 'clear';
  if (answer === 'silence') return void hanging.add(res);
  const prism = twilio ? lookupsPrism : check === 'sim_swap' ? simSwapPrism : forwardingPrism;
  const prefer = answer === 'fail' ? 'code=429' : `example=${examples[check]?.[answer] ?? ''}`;
  const headers: Record<string, string> = { prefer, accept: 'application/json' };
  for (const name of ['authorization', 'content-type'] as const) if (req.headers[name] !== undefined) headers[name] = String(req.headers[name]);
  // Prism serves a CAMARA description's paths at its root: the API root and version of its server URL
  // (`{apiRoot}/sim-swap/v2`) are the part the service adds to CAMARA_BASE_URL, and must be exactly these.
  const base = twilio ? '' : check === 'sim_swap' ? '/sim-swap/v2' : '/call-forwarding-signal/v0.4';
  if (!url.startsWith(`${base}/`)) problems.push(`${url}: not under ${base}`);
  const answered = await fetch(`${prism.url}${url.slice(base.length)}`, { method: req.method ?? 'GET', headers, ...(body !== '' && { body }) });
  res.writeHead(answered.status, { 'content-type': answered.headers.get('content-type') ?? 'application/json' }).end(await answered.text());
}

/** A fresh number the peers answer `answer` for, local and E.164. */
function numberAnswering(answer: Answer): { local: string; e164: string } {
  const local = nextLocalNumber();
  answers.set(e164Of(local), answer);
  return { local, e164: e164Of(local) };
}

const askedOf = (check: string, e164: string) => asked.filter((a) => a.check === check && a.e164 === e164);

forEachDatabase('carrier checks', (kind) => {
  let camara: Harness;
  let twilio: Harness;
  let slow: Harness;
  before(async () => {
    const camaraEnv = {
      SIM_SWAP_PROVIDER: 'camara',
      CALL_FORWARDING_PROVIDER: 'camara',
      CAMARA_BASE_URL: proxyUrl,
      CAMARA_TOKEN_URL: `${tokenEndpoint.url}/oauth2/token`,
      CAMARA_CLIENT_ID: camaraClient.id,
      CAMARA_CLIENT_SECRET: camaraClient.secret,
      TURNSTILE_VERIFY_URL: siteverify.url,
    };
    [camara, twilio, slow] = await Promise.all([
      createHarness(kind, { env: camaraEnv }),
      createHarness(kind, { env: { SIM_SWAP_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: twilioAccount.sid, TWILIO_AUTH_TOKEN: twilioAccount.token, TWILIO_LOOKUPS_BASE_URL: proxyUrl } }),
      // The one test that waits: a peer that never answers, given a short bound.
      createHarness(kind, { env: { ...camaraEnv, CARRIER_CHECK_TIMEOUT_MS: '150' } }),
    ]);
  });
  after(async () => {
    await Promise.all([camara.close(), twilio.close(), slow.close()]);
    assert.deepEqual(problems, []);
  });

  const admin = (h: Harness, command: AdminCommand) => operatorCommand(h.services, command);
  const create = (h: Harness, token: string, local: string, body: Record<string, unknown> = {}) =>
    h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: local, ...body });
  const created = (res: Awaited<ReturnType<typeof create>>): RecordBody & { delivery: { channel: string } } => {
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ data: RecordBody & { delivery: { channel: string } } }>().data;
  };
  const metrics = async (h: Harness) => (await h.app.inject({ method: 'GET', url: '/metrics' })).body;

  it("a recent SIM swap (CAMARA): shadow_block without a CAPTCHA, challenge where the client's CAPTCHA is passed; clear allows; one token", async () => {
    const plain = await camara.token();
    const tokensBefore = tokenRequests;
    const swapped = numberAnswering('flagged');
    assert.deepEqual(created(await create(camara, plain, swapped.local)).risk, {
      verdict: 'shadow_block',
      factors: [{ factor: 'sim_swap_recent', rule: 'sim-swap', mode: 'shadow' }],
    });
    assert.deepEqual(JSON.parse(askedOf('sim_swap', swapped.e164)[0]?.body ?? '{}'), { phoneNumber: swapped.e164, maxAge: 72 });
    assert.equal(askedOf('sim_swap', swapped.e164)[0]?.url, '/sim-swap/v2/check');
    assert.deepEqual(created(await create(camara, plain, numberAnswering('clear').local)).risk, { verdict: 'allow', factors: [] });

    const guarded = await camara.client();
    await admin(camara, { name: 'clients.update', id: guarded.clientId, change: { captcha: { provider: 'turnstile', secret: 'turnstile-secret' } } });
    const other = numberAnswering('flagged');
    assert.deepEqual(created(await create(camara, await camara.token(undefined, guarded), other.local, { captchaToken: 'passed-1' })).risk, {
      verdict: 'challenge',
      factors: [{ factor: 'sim_swap_recent', rule: 'sim-swap', mode: 'enforce' }],
    });

    // A CAPTCHA asked only when needed is asked for by the swap: nothing is sent without it.
    const whenNeeded = await camara.client();
    await admin(camara, { name: 'clients.update', id: whenNeeded.clientId, change: { captcha: { provider: 'turnstile', secret: 'turnstile-secret', when: 'throttled' } } });
    const token = await camara.token(undefined, whenNeeded);
    const third = numberAnswering('flagged');
    const before = await sendCounts(camara);
    const asks = expectV1Error(await create(camara, token, third.local), 403, 'CAPTCHA_REQUIRED');
    assert.deepEqual(asks.error.details?.at(-1), { factor: 'sim_swap_recent', rule: 'sim-swap', mode: 'enforce' });
    assert.deepEqual(await sendCounts(camara), before);
    assert.equal(created(await create(camara, token, third.local, { captchaToken: 'passed-2' })).risk.verdict, 'challenge');

    // Off: the network is not asked.
    await admin(camara, { name: 'rules.set', rule: 'sim-swap', mode: 'off', clientId: whenNeeded.clientId });
    const unasked = numberAnswering('flagged');
    assert.deepEqual(created(await create(camara, token, unasked.local)).risk, { verdict: 'allow', factors: [] });
    assert.equal(askedOf('sim_swap', unasked.e164).length, 0);
    assert.equal(tokenRequests - tokensBefore, 1, 'one token serves every check until it nears its expiry');

    const text = await metrics(camara);
    for (const outcome of ['flagged', 'clear']) assert.match(text, new RegExp(`otp_carrier_checks_total\\{check="sim_swap",outcome="${outcome}"\\} [1-9]`), outcome);
  });

  it('call forwarding active before a VOICE_CALL: 403 with its factor; with a workflow the SMS step carries the code; an SMS is not asked about', async () => {
    const token = await camara.token();
    const forwarded = numberAnswering('flagged');
    const before = await sendCounts(camara);
    const refused = expectV1Error(await create(camara, token, forwarded.local, { type: 'VOICE_CALL' }), 403, 'NUMBER_NOT_ALLOWED');
    assert.deepEqual(refused.error.details?.at(-1), { factor: 'call_forwarding_active', rule: 'call-forwarding', mode: 'enforce' });
    assert.deepEqual(await sendCounts(camara), before, 'nothing written, sent nor queued');
    assert.deepEqual(JSON.parse(askedOf('call_forwarding', forwarded.e164)[0]?.body ?? '{}'), { phoneNumber: forwarded.e164 });
    assert.equal(askedOf('call_forwarding', forwarded.e164)[0]?.url, '/call-forwarding-signal/v0.4/unconditional-call-forwardings');

    const stepped = created(await create(camara, token, forwarded.local, { type: 'DROPPED_CALL', fallback: ['VOICE_CALL', 'SEND_SMS'] }));
    assert.equal(stepped.delivery.channel, 'SMS', "the workflow's first step that does not ring");
    assert.deepEqual(stepped.risk.factors.at(-1), { factor: 'call_forwarding_active', rule: 'call-forwarding', mode: 'enforce' });

    const sms = numberAnswering('flagged');
    created(await create(camara, token, sms.local));
    assert.equal(askedOf('call_forwarding', sms.e164).length, 0);

    const shadowClient = await camara.client();
    await admin(camara, { name: 'rules.set', rule: 'call-forwarding', mode: 'shadow', clientId: shadowClient.clientId });
    const shadowed = created(await create(camara, await camara.token(undefined, shadowClient), numberAnswering('flagged').local, { type: 'VOICE_CALL' }));
    assert.equal(shadowed.delivery.channel, 'VOICE', 'in shadow the call goes out');
    assert.deepEqual(shadowed.risk.factors.at(-1), { factor: 'call_forwarding_active', rule: 'call-forwarding', mode: 'shadow' });
  });

  it('a second create within the cache time asks the network no more; after it, again', async () => {
    const token = await camara.token();
    const number = numberAnswering('clear');
    created(await create(camara, token, number.local, { type: 'VOICE_CALL' }));
    camara.clock.advance(60_000); // past the number's cool-down
    created(await create(camara, token, number.local, { type: 'VOICE_CALL' }));
    assert.equal(askedOf('sim_swap', number.e164).length, 1);
    assert.equal(askedOf('call_forwarding', number.e164).length, 1);
    camara.clock.advance(3600_000);
    // A new token too: the first one's time is over as well.
    created(await create(camara, await camara.token(), number.local));
    assert.equal(askedOf('sim_swap', number.e164).length, 2);
  });

  it('a network that fails or never answers lets the send through, counted as failed or timeout', async () => {
    const token = await slow.token();
    const started = Date.now();
    assert.deepEqual(created(await create(slow, token, numberAnswering('silence').local, { type: 'VOICE_CALL' })).risk, { verdict: 'allow', factors: [] });
    assert.ok(Date.now() - started < 5_000, 'the send waited no longer than the bound (with room for a busy machine)');
    assert.deepEqual(created(await create(slow, token, numberAnswering('fail').local)).risk, { verdict: 'allow', factors: [] });
    const text = await metrics(slow);
    assert.match(text, /otp_carrier_checks_total\{check="sim_swap",outcome="timeout"\} [1-9]/);
    assert.match(text, /otp_carrier_checks_total\{check="call_forwarding",outcome="timeout"\} [1-9]/);
    assert.match(text, /otp_carrier_checks_total\{check="sim_swap",outcome="failed"\} [1-9]/);
  });

  const resend = (h: Harness, token: string, id: string, body?: Record<string, unknown>) => h.call('POST', `/v1/otp/${id}/resend`, token, body);
  /** How many times the metrics counted a factor (0 when never). */
  const factorCount = async (h: Harness, factor: string, mode: string) =>
    Number(new RegExp(`otp_risk_factors_total\\{factor="${factor}",rule="[a-z-]+",mode="${mode}"\\} (\\d+)`).exec(await metrics(h))?.[1] ?? 0);

  it("a resend after a recent SIM swap: CAPTCHA_REQUIRED with the factor where the client's CAPTCHA enforces, heard in shadow without one; the kept answer asks the network no more", async () => {
    const plain = await camara.token();
    const swapped = numberAnswering('flagged');
    const v = created(await create(camara, plain, swapped.local));
    camara.clock.advance(60_000); // past the number's cool-down
    const shadowed = await factorCount(camara, 'sim_swap_recent', 'shadow');
    assert.equal((await resend(camara, plain, v.id)).statusCode, 200);
    assert.equal(await factorCount(camara, 'sim_swap_recent', 'shadow'), shadowed + 1, "the resend's factor is counted");
    assert.equal(askedOf('sim_swap', swapped.e164).length, 1, 'the create asked; the resend read the kept answer');

    const guarded = await camara.client();
    await admin(camara, { name: 'clients.update', id: guarded.clientId, change: { captcha: { provider: 'turnstile', secret: 'turnstile-secret' } } });
    const token = await camara.token(undefined, guarded);
    const other = numberAnswering('flagged');
    const challenged = created(await create(camara, token, other.local, { captchaToken: 'resend-passed-1' }));
    camara.clock.advance(60_000);
    const before = await sendCounts(camara);
    const asks = expectV1Error(await resend(camara, token, challenged.id), 403, 'CAPTCHA_REQUIRED');
    assert.deepEqual(asks.error.details?.at(-1), { factor: 'sim_swap_recent', rule: 'sim-swap', mode: 'enforce' });
    assert.deepEqual(await sendCounts(camara), before, 'nothing sent');
    assert.equal((await resend(camara, token, challenged.id, { captchaToken: 'resend-passed-2' })).statusCode, 200);
    assert.equal(askedOf('sim_swap', other.e164).length, 1);
  });

  it('a resend of a voice call to a forwarded line: 403 NUMBER_NOT_ALLOWED with its factor, nothing sent, the kept answer used', async () => {
    const client = await camara.client();
    const token = await camara.token(undefined, client);
    // Heard in shadow at the create, so that a call goes out to a forwarded line; then enforced.
    await admin(camara, { name: 'rules.set', rule: 'call-forwarding', mode: 'shadow', clientId: client.clientId });
    const forwarded = numberAnswering('flagged');
    const v = created(await create(camara, token, forwarded.local, { type: 'VOICE_CALL' }));
    assert.equal(v.delivery.channel, 'VOICE');
    await admin(camara, { name: 'rules.set', rule: 'call-forwarding', mode: 'enforce', clientId: client.clientId });
    camara.clock.advance(60_000);
    const before = await sendCounts(camara);
    const refused = expectV1Error(await resend(camara, token, v.id), 403, 'NUMBER_NOT_ALLOWED');
    assert.deepEqual(refused.error.details?.at(-1), { factor: 'call_forwarding_active', rule: 'call-forwarding', mode: 'enforce' });
    assert.deepEqual(await sendCounts(camara), before, 'nothing sent');
    assert.equal(askedOf('call_forwarding', forwarded.e164).length, 1, 'the resend asked the network nothing more');
    assert.match(await metrics(camara), /otp_resends_refused_total\{reason="call-forwarding"\} [1-9]/);
  });

  it('a workflow SMS then VOICE_CALL whose call step meets a forwarded line: the call is not placed, the verification waits for its code', async () => {
    const token = await camara.token();
    const forwarded = numberAnswering('flagged');
    const v = created(await create(camara, token, forwarded.local, { fallback: ['VOICE_CALL'] }));
    assert.equal(v.delivery.channel, 'SMS');
    assert.equal(askedOf('call_forwarding', forwarded.e164).length, 0, 'an SMS is not asked about');
    const before = await sendCounts(camara);
    const counted = await factorCount(camara, 'call_forwarding_active', 'enforce');
    camara.clock.advance(61_000); // FALLBACK_AFTER_SECONDS
    await camara.services.deliveries.takeDueSteps();
    assert.deepEqual(await sendCounts(camara), before, 'no call placed');
    assert.equal(askedOf('call_forwarding', forwarded.e164).length, 1);
    const now = (await camara.call('GET', `/v1/otp/${v.id}`, token)).json<{ data: RecordBody & { delivery: { channel: string } } }>().data;
    assert.equal(now.status, 'PENDING');
    assert.equal(now.delivery.channel, 'SMS');
    assert.equal(await factorCount(camara, 'call_forwarding_active', 'enforce'), counted + 1);
    assert.ok(
      now.risk.factors.some((f) => f.factor === 'call_forwarding_active' && f.rule === 'call-forwarding' && f.mode === 'enforce'),
      `the step's factor is on the record: ${JSON.stringify(now.risk)}`,
    );
    // Its clock stopped: a later poll asks and sends nothing.
    camara.clock.advance(61_000);
    await camara.services.deliveries.takeDueSteps();
    assert.deepEqual(await sendCounts(camara), before);
  });

  it("a recent SIM swap through Twilio Lookup v2's sim_swap field", async () => {
    const token = await twilio.token();
    const swapped = numberAnswering('flagged');
    assert.deepEqual(created(await create(twilio, token, swapped.local)).risk, {
      verdict: 'shadow_block',
      factors: [{ factor: 'sim_swap_recent', rule: 'sim-swap', mode: 'shadow' }],
    });
    assert.equal(askedOf('sim_swap', swapped.e164)[0]?.url, `/v2/PhoneNumbers/${encodeURIComponent(swapped.e164)}?Fields=sim_swap`);
    assert.deepEqual(created(await create(twilio, token, numberAnswering('clear').local)).risk, { verdict: 'allow', factors: [] });
    assert.match(await metrics(twilio), /otp_carrier_checks_total\{check="sim_swap",outcome="flagged"\} 1\b/);
  });
});
