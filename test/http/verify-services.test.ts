import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runAudited } from '../../src/admin/audited.js';
import type { AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { eventKinds, expectV1Error, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startTwilioVerifyPrism, type PrismMock } from '../support/prism.js';
import { TwilioVerifySpec } from '../support/twilio-verify-spec.js';
import { startVonageVerifyPrism } from '../support/vonage-prism.js';

/**
 * Contract 19, verify services as providers: twilio-verify and vonage-verify make, send and check their own code.
 * Their peers are their own OpenAPI descriptions served by Prism, which refuses any request they do not allow
 * (Twilio's Verify v2 as Twilio publishes it; Vonage's Verify v2 0.0.14). A small proxy in front picks the answer:
 * the code `rightCode` is the one the service "sent"; Twilio's description has only `approved` examples, so the
 * proxy turns any other code's answer into Twilio's `pending` (checked against the description's schema); Vonage's
 * answer is picked with Prism's `Prefer: code=`. It can also be down (503), and refuse sends to chosen numbers.
 */
const accountSid = 'AC0123456789abcdef0123456789abcdef';
const authToken = 'test-auth-token-0123456789abcdef';
const serviceSid = 'VA0123456789abcdef0123456789abcdef';
const rightCode = '482915';
/** Vonage answers 410 (the request ended: too many wrong codes) to this one. */
const goneCode = '999999';

interface Delivered {
  id: string;
  status: string;
  otp: string | null;
  counter: number;
  failureReason: string | null;
  delivery: { channel: string; provider: string | null; status: string; sends: number };
  deliveries: { channel: string; provider: string; status: string }[];
}

interface Asked {
  readonly path: string;
  readonly body: string;
}

class Peers {
  readonly asked: Asked[] = [];
  /** Numbers (E.164) whose sends are refused (Twilio 400 error 60200, Vonage 422). */
  readonly refused = new Set<string>();
  down = false;
  /** Checks are held unanswered until this is false again (a service that does not answer). */
  hang = false;
  private server!: http.Server;
  private twilio!: PrismMock;
  private vonage!: PrismMock;
  private readonly spec = new TwilioVerifySpec();
  url = '';

  async start(): Promise<void> {
    [this.twilio, this.vonage] = await Promise.all([startTwilioVerifyPrism(), startVonageVerifyPrism()]);
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        this.answer(req, body)
          .then(({ status, text }) => res.writeHead(status, { 'content-type': 'application/json' }).end(text))
          .catch((err: unknown) => res.writeHead(502).end(String(err)));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([this.twilio.stop(), this.vonage.stop()]);
  }

  /** What was asked of a path ending in `suffix`. */
  askedAt(suffix: string | RegExp): Asked[] {
    return this.asked.filter((a) => (typeof suffix === 'string' ? a.path.endsWith(suffix) : suffix.test(a.path)));
  }

  private async answer(req: http.IncomingMessage, body: string): Promise<{ status: number; text: string }> {
    const path = req.url ?? '';
    this.asked.push({ path, body });
    const twilio = path.startsWith('/v2/Services/');
    while (this.hang && !path.endsWith('/Verifications') && path !== '/v2/verify') await new Promise((resolve) => setTimeout(resolve, 20));
    if (this.down) {
      return twilio
        ? { status: 503, text: JSON.stringify({ code: 20503, message: 'Service Unavailable', more_info: 'https://www.twilio.com/docs/errors/20503', status: 503 }) }
        : { status: 503, text: '' };
    }
    const headers: Record<string, string> = { 'content-type': String(req.headers['content-type']), authorization: String(req.headers.authorization) };
    if (twilio) {
      const form = new URLSearchParams(body);
      if (path.endsWith('/Verifications') && this.refused.has(form.get('To') ?? '')) {
        return { status: 400, text: JSON.stringify({ code: 60200, message: 'Invalid parameter', more_info: 'https://www.twilio.com/docs/errors/60200', status: 400 }) };
      }
      const answered = await this.forward(this.twilio, path, headers, body);
      if (path.endsWith('/VerificationCheck') && (answered.status === 200 || answered.status === 201) && form.get('Code') !== rightCode) {
        const pending = JSON.stringify({ ...(JSON.parse(answered.text) as object), status: 'pending', valid: false });
        this.spec.check('POST', `https://verify.twilio.com${path}`, answered.status, pending);
        return { status: answered.status, text: pending };
      }
      return answered;
    }
    if (path === '/v2/verify') {
      const to = (JSON.parse(body) as { workflow?: { to?: string }[] }).workflow?.[0]?.to ?? '';
      if (this.refused.has(`+${to}`)) {
        // Checked by Prism first; its own example of a 422 does not match the description's schema, so the refusal is written here.
        const checked = await this.forward(this.vonage, path, headers, body);
        assert.equal(checked.status, 202, checked.text);
        return { status: 422, text: JSON.stringify({ type: 'https://developer.nexmo.com/api-errors#invalid-params', title: 'Invalid params', detail: 'The value of one or more parameters is invalid', instance: 'bf0ca0bf927b3b52e3cb03217e1a1ddf' }) };
      }
    } else {
      const code = (JSON.parse(body) as { code?: string }).code;
      headers.prefer = `code=${code === rightCode ? 200 : code === goneCode ? 410 : 400}`;
    }
    return this.forward(this.vonage, path, headers, body);
  }

  private async forward(prism: PrismMock, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
    const res = await fetch(`${prism.url}${path}`, { method: 'POST', headers, body });
    const text = await res.text();
    // A request the description does not allow is Prism's 4xx with a problem detail: the test should see it.
    if ((res.status === 422 || res.status === 500) && text.includes('stoplight.io/prism/errors')) throw new Error(`Prism refused ${path}: ${text}`);
    return { status: res.status, text };
  }
}

const peers = new Peers();
before(async () => {
  await peers.start();
});
after(async () => {
  await peers.stop();
});

/** A Nigerian number no other test used, local and E.164. */
function number(): { local: string; e164: string } {
  const local = nextLocalNumber();
  return { local, e164: `+234${local.slice(1)}` };
}

async function withHarness(kind: Parameters<typeof createHarness>[0], env: Record<string, string>): Promise<Harness> {
  return createHarness(kind, {
    env: {
      OTP_MAX_ATTEMPTS: '3',
      PROVIDER_TIMEOUT_MS: '2000',
      WHATSAPP_PROVIDER: 'log',
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: authToken,
      TWILIO_VERIFY_SERVICE_SID: serviceSid,
      TWILIO_VERIFY_BASE_URL: peers.url,
      VONAGE_API_KEY: 'abcd1234',
      VONAGE_API_SECRET: 'vonage-secret-0123',
      VONAGE_SIGNATURE_SECRET: 'vonage-signature-secret',
      VONAGE_VERIFY_BRAND: 'ACME',
      VONAGE_VERIFY_BASE_URL: peers.url,
      ...env,
    },
  });
}

/** The shared steps of both services' tests. */
function steps(h: () => Harness) {
  const create = async (token: string, phone: { local: string }, body: Record<string, unknown> = {}): Promise<Delivered> => {
    const res = await h().call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: phone.local, webhookUrl: 'https://hooks.example.test/otp', ...body });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Delivered }).data;
  };
  const record = async (token: string, id: string): Promise<Delivered> => {
    await h().services.sendWorker.idle();
    const res = await h().call('GET', `/v1/otp/${id}`, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as { data: Delivered }).data;
  };
  const verify = (token: string, id: string, otp: string) => h().call('POST', '/v1/otp/verify', token, { id, otp });
  /** The code our own provider (`log`) sent for a verification, read from what it kept. */
  const ownCode = async (id: string): Promise<string> => {
    const rows = await h().services.db.db.selectFrom('messages').select(['body', 'channel']).where('verification_id', '=', id).execute();
    assert.equal(rows.length, 1, JSON.stringify(rows));
    const code = /\d{6}/.exec(rows[0]?.body ?? '')?.[0];
    assert.ok(code, rows[0]?.body);
    return code;
  };
  const route = async (destination: string, providers: string[]) => {
    const command: AdminCommand = { name: 'routes.set', channel: 'sms', destination, providers };
    const r = await runAudited(adminDeps(h().services), 'cli', command);
    assert.ok(r.ok, r.ok ? '' : r.error);
  };
  return { create, record, verify, ownCode, route };
}

forEachDatabase('twilio-verify as an SMS provider', (kind) => {
  let h: Harness;
  let token: string;
  const { create, record, verify, ownCode, route } = steps(() => h);
  before(async () => {
    h = await withHarness(kind, { SMS_PROVIDER: 'twilio-verify,log' });
    token = await h.token();
  });
  after(async () => {
    await h.close();
  });

  it('sends through Twilio Verify (To, Channel=sms, never a code of ours): otp null, delivery twilio-verify; the right code is SUCCESS with its event', async () => {
    const phone = number();
    const created = await create(token, phone);
    assert.equal(created.otp, null, 'the code is Twilio\'s: none is shown, not even before the send');
    const v = await record(token, created.id);
    assert.deepEqual([v.otp, v.delivery.channel, v.delivery.provider, v.delivery.status], [null, 'SMS', 'twilio-verify', 'SENT']);
    assert.deepEqual(v.deliveries.map((d) => `${d.channel} ${d.provider} ${d.status}`), ['SMS twilio-verify SENT']);
    const sent = peers.askedAt(`/v2/Services/${serviceSid}/Verifications`).map((a) => new URLSearchParams(a.body)).filter((f) => f.get('To') === phone.e164);
    assert.equal(sent.length, 1);
    assert.deepEqual([...(sent[0]?.keys() ?? [])].sort(), ['Channel', 'To']);
    assert.equal(sent[0]?.get('Channel'), 'sms');
    const rows = await h.services.db.db.selectFrom('messages').select('id').where('verification_id', '=', v.id).execute();
    assert.equal(rows.length, 0, 'nothing of ours was sent');

    const ok = await verify(token, v.id, rightCode);
    assert.equal(ok.statusCode, 200, ok.body);
    const done = (ok.json() as { data: Delivered }).data;
    assert.deepEqual([done.status, done.counter, done.otp], ['SUCCESS', 1, null]);
    assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
    const checks = peers.askedAt(`/v2/Services/${serviceSid}/VerificationCheck`).map((a) => new URLSearchParams(a.body));
    assert.deepEqual(Object.fromEntries(checks.at(-1) ?? []), { VerificationSid: 'VEaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', Code: rightCode });
  });

  it('a wrong code is 422 OTP_MISMATCH with the attempt counted, FAILED MAX_ATTEMPTS with its event after OTP_MAX_ATTEMPTS', async () => {
    const v = await record(token, (await create(token, number())).id);
    for (const attempt of [1, 2]) {
      const wrong = expectV1Error(await verify(token, v.id, '111111'), 422, 'OTP_MISMATCH');
      const data = wrong.data as unknown as Delivered;
      assert.deepEqual([data.status, data.counter], ['PENDING', attempt]);
    }
    const last = expectV1Error(await verify(token, v.id, '111111'), 422, 'OTP_MISMATCH').data as unknown as Delivered;
    assert.deepEqual([last.status, last.failureReason, last.counter], ['FAILED', 'MAX_ATTEMPTS', 3]);
    assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
    expectV1Error(await verify(token, v.id, rightCode), 409, 'VERIFICATION_NOT_PENDING');
  });

  it('Twilio Verify down: 503 UNAVAILABLE with Retry-After, no attempt counted; once it answers, the code is checked', async () => {
    const v = await record(token, (await create(token, number())).id);
    peers.down = true;
    try {
      const res = await verify(token, v.id, rightCode);
      expectV1Error(res, 503, 'UNAVAILABLE');
      assert.ok(Number(res.headers['retry-after']) > 0, String(res.headers['retry-after']));
    } finally {
      peers.down = false;
    }
    assert.deepEqual([(await record(token, v.id)).counter, (await record(token, v.id)).status], [0, 'PENDING']);
    assert.equal((await verify(token, v.id, rightCode)).statusCode, 200);
  });

  it('Twilio Verify silent past PROVIDER_TIMEOUT_MS: 503 UNAVAILABLE at its end, no attempt counted', async () => {
    const v = await record(token, (await create(token, number())).id);
    peers.hang = true;
    const started = performance.now();
    try {
      expectV1Error(await verify(token, v.id, rightCode), 503, 'UNAVAILABLE');
    } finally {
      peers.hang = false;
    }
    const took = performance.now() - started;
    assert.ok(took >= 1900 && took < 10_000, `answered after ${Math.round(took)} ms (PROVIDER_TIMEOUT_MS 2000)`);
    assert.equal((await record(token, v.id)).counter, 0);
  });

  it('a resend asks Twilio Verify again for the same number (a new Verification POST resends its code)', async () => {
    const phone = number();
    const v = await record(token, (await create(token, phone)).id);
    h.clock.advance(120_000);
    const res = await h.call('POST', `/v1/otp/${v.id}/resend`, token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((res.json() as { data: Delivered }).data.otp, null);
    const r = await record(token, v.id);
    assert.deepEqual([r.delivery.provider, r.delivery.sends, r.otp], ['twilio-verify', 2, null]);
    const sent = peers.askedAt('/Verifications').filter((a) => new URLSearchParams(a.body).get('To') === phone.e164);
    assert.equal(sent.length, 2);
    assert.equal((await verify(token, v.id, rightCode)).statusCode, 200);
  });

  it('a failover away from Twilio Verify sends a code of our own (deliveries say so), checked here and not by Twilio', async () => {
    const phone = number();
    peers.refused.add(phone.e164);
    const v = await record(token, (await create(token, phone)).id);
    assert.deepEqual(v.deliveries.map((d) => `${d.channel} ${d.provider} ${d.status}`), ['SMS twilio-verify FAILED', 'SMS log SENT']);
    assert.equal(v.delivery.provider, 'log');
    const code = await ownCode(v.id);
    const checksBefore = peers.askedAt('/VerificationCheck').length;
    expectV1Error(await verify(token, v.id, rightCode), 422, 'OTP_MISMATCH');
    const ok = await verify(token, v.id, code);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(peers.askedAt('/VerificationCheck').length, checksBefore, 'Twilio was not asked about our code');
  });

  it('a workflow step away from Twilio Verify sends a code of our own through its channel', async () => {
    const phone = number();
    peers.refused.add(phone.e164);
    await route(phone.e164.slice(0, 10), ['twilio-verify']);
    try {
      const v = await record(token, (await create(token, phone, { fallback: ['WHATSAPP'] })).id);
      assert.deepEqual(v.deliveries.map((d) => `${d.channel} ${d.provider} ${d.status}`), ['SMS twilio-verify FAILED', 'WHATSAPP log SENT']);
      const ok = await verify(token, v.id, await ownCode(v.id));
      assert.equal(ok.statusCode, 200, ok.body);
    } finally {
      const r = await runAudited(adminDeps(h.services), 'cli', { name: 'routes.remove', channel: 'sms', destination: phone.e164.slice(0, 10) });
      assert.ok(r.ok);
    }
  });

  it('a route sends one country through twilio-verify while the others go through log (their code shown and ours)', async () => {
    await route('default', ['log']);
    await route('NG', ['twilio-verify']);
    const ng = await record(token, (await create(token, number())).id);
    assert.deepEqual([ng.delivery.provider, ng.otp], ['twilio-verify', null]);
    const res = await h.call('POST', '/v1/otp/request', token, { countryCode: '+233', phoneNumber: '0241234567' });
    assert.equal(res.statusCode, 200, res.body);
    const created = (res.json() as { data: Delivered }).data;
    assert.match(String(created.otp), /^\d{6}$/);
    const gh = await record(token, created.id);
    assert.deepEqual([gh.delivery.provider, gh.otp], ['log', created.otp]);
    assert.equal((await verify(token, gh.id, String(created.otp))).statusCode, 200);
    assert.equal((await verify(token, ng.id, rightCode)).statusCode, 200);
  });
});

forEachDatabase('vonage-verify as an SMS provider', (kind) => {
  let h: Harness;
  let token: string;
  const { create, record, verify, ownCode } = steps(() => h);
  before(async () => {
    h = await withHarness(kind, { SMS_PROVIDER: 'vonage-verify,log' });
    token = await h.token();
  });
  after(async () => {
    await h.close();
  });

  it('sends through Vonage Verify ({ brand, workflow: [sms] }): otp null, delivery vonage-verify; the right code is SUCCESS with its event', async () => {
    const phone = number();
    const created = await create(token, phone);
    assert.equal(created.otp, null);
    const v = await record(token, created.id);
    assert.deepEqual([v.otp, v.delivery.channel, v.delivery.provider, v.delivery.status], [null, 'SMS', 'vonage-verify', 'SENT']);
    const sent = peers.askedAt(/^\/v2\/verify$/).map((a) => JSON.parse(a.body) as unknown).filter((b) => JSON.stringify(b).includes(phone.e164.slice(1)));
    assert.deepEqual(sent, [{ brand: 'ACME', workflow: [{ channel: 'sms', to: phone.e164.slice(1) }] }]);
    const ok = await verify(token, v.id, rightCode);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal((ok.json() as { data: Delivered }).data.status, 'SUCCESS');
    assert.deepEqual(await eventKinds(h, v.id), ['action.otp.success']);
    assert.deepEqual(JSON.parse(peers.askedAt(/^\/v2\/verify\/[^/]+$/).at(-1)?.body ?? '{}'), { code: rightCode });
    assert.equal(peers.askedAt(/^\/v2\/verify\/[^/]+$/).at(-1)?.path, '/v2/verify/c11236f4-00bf-4b89-84ba-88b25df97315');
  });

  it('a wrong code (400) and a request gone (410) count as wrong attempts: 422, then FAILED MAX_ATTEMPTS with its event', async () => {
    const v = await record(token, (await create(token, number())).id);
    assert.equal((expectV1Error(await verify(token, v.id, '111111'), 422, 'OTP_MISMATCH').data as unknown as Delivered).counter, 1);
    assert.equal((expectV1Error(await verify(token, v.id, goneCode), 422, 'OTP_MISMATCH').data as unknown as Delivered).counter, 2);
    const last = expectV1Error(await verify(token, v.id, '111111'), 422, 'OTP_MISMATCH').data as unknown as Delivered;
    assert.deepEqual([last.status, last.failureReason], ['FAILED', 'MAX_ATTEMPTS']);
    assert.deepEqual(await eventKinds(h, v.id), ['action.otp.failed']);
  });

  it('Vonage Verify down: 503 UNAVAILABLE with Retry-After, no attempt counted', async () => {
    const v = await record(token, (await create(token, number())).id);
    peers.down = true;
    try {
      const res = await verify(token, v.id, rightCode);
      expectV1Error(res, 503, 'UNAVAILABLE');
      assert.ok(Number(res.headers['retry-after']) > 0);
    } finally {
      peers.down = false;
    }
    assert.equal((await record(token, v.id)).counter, 0);
    assert.equal((await verify(token, v.id, rightCode)).statusCode, 200);
  });

  it('a resend is a new Vonage Verify request for the same number (the description has no next_workflow), checked under its request_id', async () => {
    const phone = number();
    const v = await record(token, (await create(token, phone)).id);
    h.clock.advance(120_000);
    const res = await h.call('POST', `/v1/otp/${v.id}/resend`, token);
    assert.equal(res.statusCode, 200, res.body);
    const r = await record(token, v.id);
    assert.deepEqual([r.delivery.provider, r.delivery.sends, r.otp], ['vonage-verify', 2, null]);
    assert.equal(peers.askedAt(/^\/v2\/verify$/).filter((a) => a.body.includes(phone.e164.slice(1))).length, 2);
    assert.equal((await verify(token, v.id, rightCode)).statusCode, 200);
  });

  it('a failover away from Vonage Verify sends a code of our own, checked here', async () => {
    const phone = number();
    peers.refused.add(phone.e164);
    const v = await record(token, (await create(token, phone)).id);
    assert.deepEqual(v.deliveries.map((d) => `${d.channel} ${d.provider} ${d.status}`), ['SMS vonage-verify FAILED', 'SMS log SENT']);
    const ok = await verify(token, v.id, await ownCode(v.id));
    assert.equal(ok.statusCode, 200, ok.body);
  });
});

describe('verify service settings', () => {
  it('twilio-verify without TWILIO_VERIFY_SERVICE_SID and the account settings stops the start, naming them', async () => {
    const { loadConfig } = await import('../../src/config.js');
    assert.throws(
      () => loadConfig({ SMS_PROVIDER: 'twilio-verify,log', LOG_LEVEL: 'silent' }),
      (err: Error) =>
        /TWILIO_VERIFY_SERVICE_SID: required by the twilio-verify provider/.test(err.message) &&
        /TWILIO_ACCOUNT_SID: required by the twilio-verify provider/.test(err.message) &&
        /TWILIO_AUTH_TOKEN: required by the twilio-verify provider/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ SMS_PROVIDER: 'vonage-verify', LOG_LEVEL: 'silent', VONAGE_API_KEY: 'abcd1234', VONAGE_SIGNATURE_SECRET: 'x' }),
      (err: Error) => /VONAGE_API_SECRET: required by the vonage-verify provider/.test(err.message) && /VONAGE_VERIFY_BRAND: required/.test(err.message),
    );
  });
});
