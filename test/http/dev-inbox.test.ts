import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { InboxMessage, InboxState } from '../../src/inbox/inbox-message.js';
import { createVerification, e164Of, expectV1Error, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { twilioSmsSettings } from '../support/provider-settings.js';
import { openEventStream, type ReceivedEvent } from '../support/sse.js';

const twilio = twilioSmsSettings;

describe('DEV_INBOX: when the development inbox is on', () => {
  it('is on when every provider is log, off with a real one unless DEV_INBOX=true, off with DEV_INBOX=false', () => {
    assert.equal(loadConfig({}).devInbox, true);
    assert.equal(loadConfig({ DEV_INBOX: 'false' }).devInbox, false);
    assert.equal(loadConfig(twilio).devInbox, false);
    assert.equal(loadConfig({ ...twilio, SMS_PROVIDER: 'log,twilio' }).devInbox, false);
    assert.equal(loadConfig({ ...twilio, DEV_INBOX: 'true' }).devInbox, true);
    assert.throws(() => loadConfig({ DEV_INBOX: 'maybe' }), /DEV_INBOX/);
  });
});

describe('GET /dev/inbox when off', () => {
  for (const [name, env] of [
    ['a real provider configured', twilio],
    ['DEV_INBOX=false', { DEV_INBOX: 'false' }],
  ] as const) {
    it(`is the contract's 404 with ${name}`, async () => {
      const h = await createHarness('pglite', { env });
      try {
        expectV1Error(await h.call('GET', '/dev/inbox', null), 404, 'NOT_FOUND');
        expectV1Error(await h.call('GET', '/dev/inbox/events', null), 404, 'NOT_FOUND');
      } finally {
        await h.close();
      }
    });
  }

  it('is served beside a real provider when DEV_INBOX=true', async () => {
    const h = await createHarness('pglite', { env: { ...twilio, DEV_INBOX: 'true' } });
    try {
      assert.equal((await h.call('GET', '/dev/inbox', null)).statusCode, 200);
    } finally {
      await h.close();
    }
  });
});

describe('GET /dev/inbox: the page', () => {
  let h: Harness;
  before(async () => {
    h = await createHarness('pglite');
  });
  after(() => h.close());

  it('is one self-contained document under a strict Content-Security-Policy with a fresh nonce', async () => {
    const res = await h.call('GET', '/dev/inbox', null);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /connect-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    // Every script and style carries the nonce; nothing is loaded from elsewhere.
    const tags = res.body.match(/<(script|style)\b[^>]*>/g) ?? [];
    assert.ok(tags.length >= 2);
    for (const tag of tags) assert.ok(tag.includes(`nonce="${nonce}"`), tag);
    assert.doesNotMatch(res.body, /https?:\/\/|<link\b|\bsrc=/);
    const again = await h.call('GET', '/dev/inbox', null);
    assert.notEqual(String(again.headers['content-security-policy']), csp, 'a nonce per page');
  });
});

describe('GET /dev/inbox: only under a loopback name or the service\'s own (DNS rebinding)', () => {
  const refusedHosts = ['evil.example', 'evil.example:3000', '127.0.0.1.evil.example', 'localhost.evil.example', 'localhost@evil.example', '10.0.0.5', '[::2]', '0.0.0.0'];
  const loopbackHosts = ['localhost', 'LOCALHOST:3000', '127.0.0.1', '127.0.0.1:3000', '127.5.6.7:8080', '[::1]', '[::1]:3000', 'localhost.'];

  /** Each of the inbox's routes answers a foreign Host with the contract's 404, and nothing of the inbox. */
  async function assertRefused(h: Harness, host: string): Promise<void> {
    for (const [method, url] of [['GET', '/dev/inbox'], ['HEAD', '/dev/inbox'], ['GET', '/dev/inbox/events'], ['GET', '/dev/inbox?x=1']] as const) {
      const res = await h.app.inject({ method, url, headers: { host } });
      assert.equal(res.statusCode, 404, `${method} ${url} with Host ${JSON.stringify(host)}`);
      if (method === 'GET') expectV1Error(res, 404, 'NOT_FOUND');
      assert.doesNotMatch(String(res.headers['content-type']), /text\/(html|event-stream)/);
    }
  }

  it('answers loopback names and addresses, with or without a port, and nothing else', async () => {
    const h = await createHarness('pglite', { env: { HOST: '127.0.0.1' } });
    try {
      for (const host of loopbackHosts) {
        const res = await h.app.inject({ method: 'GET', url: '/dev/inbox', headers: { host } });
        assert.equal(res.statusCode, 200, `Host ${host}`);
      }
      for (const host of refusedHosts) await assertRefused(h, host);
      // X-Forwarded-Host is the page's to write, Host the browser's: only Host counts.
      const forwarded = await h.app.inject({ method: 'GET', url: '/dev/inbox', headers: { host: 'evil.example', 'x-forwarded-host': 'localhost' } });
      expectV1Error(forwarded, 404, 'NOT_FOUND');
    } finally {
      await h.close();
    }
  });

  it("answers PUBLIC_BASE_URL's host and the address the server is bound to, when it is not a wildcard", async () => {
    const h = await createHarness('pglite', { env: { PUBLIC_BASE_URL: 'https://OTP.example.com/base', HOST: '192.168.1.20', DEV_INBOX: 'true' } });
    try {
      for (const host of ['otp.example.com', 'otp.example.com:443', '192.168.1.20:3000', 'localhost:3000']) {
        assert.equal((await h.app.inject({ method: 'GET', url: '/dev/inbox', headers: { host } })).statusCode, 200, `Host ${host}`);
      }
      for (const host of ['other.example.com', 'otp.example.com.evil.example', '192.168.1.21']) await assertRefused(h, host);
    } finally {
      await h.close();
    }
    const wildcard = await createHarness('pglite', { env: { HOST: '0.0.0.0' } });
    try {
      await assertRefused(wildcard, '0.0.0.0:3000');
      await assertRefused(wildcard, '192.168.1.20');
    } finally {
      await wildcard.close();
    }
  });
});

const isSent = (verificationId: string) => (e: ReceivedEvent) =>
  (e.event === 'sent' && (e.data as InboxMessage).verificationId === verificationId) ||
  (e.event === 'snapshot' && (e.data as { messages: InboxMessage[] }).messages.some((m) => m.verificationId === verificationId));

const sentMessage = (e: ReceivedEvent, verificationId: string): InboxMessage => {
  const found =
    e.event === 'sent'
      ? (e.data as InboxMessage)
      : (e.data as { messages: InboxMessage[] }).messages.find((m) => m.verificationId === verificationId);
  assert.ok(found);
  return found;
};

const isState = (verificationId: string, status: string) => (e: ReceivedEvent) =>
  e.event === 'state' && (e.data as InboxState).verificationId === verificationId && (e.data as InboxState).status === status;

/** The app listening on a loopback port, as the event stream needs a real connection. */
async function listen(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  return `http://127.0.0.1:${address.port}`;
}

forEachDatabase('GET /dev/inbox/events', (kind) => {
  let h: Harness;
  let url: string;
  let token: string;
  before(async () => {
    h = await createHarness(kind);
    url = await listen(h);
    token = await h.token();
  });
  after(() => h.close());

  it('sends a snapshot, then each new SMS and call with its code, then state changes', async () => {
    const earlier = await createVerification(h, token);
    await h.services.sendWorker.idle();
    const stream = await openEventStream(`${url}/dev/inbox/events`);
    try {
      assert.equal(stream.status, 200);
      assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
      const snapshot = await stream.waitFor((e) => e.event === 'snapshot');
      const shown = (snapshot.data as { messages: InboxMessage[] }).messages;
      assert.ok(shown.some((m) => m.verificationId === earlier.id && m.code === earlier.otp));

      const local = nextLocalNumber();
      const sms = await createVerification(h, token, { phoneNumber: local });
      const smsEvent = sentMessage(await stream.waitFor(isSent(sms.id)), sms.id);
      assert.equal(smsEvent.channel, 'sms');
      assert.equal(smsEvent.to, e164Of(local));
      assert.equal(smsEvent.code, sms.otp);
      assert.ok(smsEvent.text?.includes(sms.otp));
      assert.equal(smsEvent.provider, 'log');
      assert.equal(smsEvent.testNumber, false);

      const call = await createVerification(h, token, { type: 'DROPPED_CALL' });
      const callEvent = sentMessage(await stream.waitFor(isSent(call.id)), call.id);
      assert.equal(callEvent.channel, 'call');
      assert.ok(callEvent.callerId?.endsWith(call.otp), JSON.stringify(callEvent));
      assert.equal(callEvent.text, null);

      const verified = await h.call('POST', '/v1/otp/verify', token, { id: sms.id, otp: sms.otp });
      assert.equal(verified.statusCode, 200, verified.body);
      await stream.waitFor(isState(sms.id, 'SUCCESS'), 5000);

      // Nothing secret rides along: no client id, no secret, no token.
      const all = JSON.stringify(stream.events);
      assert.ok(!all.includes(token));
      assert.doesNotMatch(all, /clientId|client_secret|cs_|whsec_/);
    } finally {
      stream.close();
    }
  });

  it('refuses more streams than it allows, in the contract shape', async () => {
    const open = await Promise.all(Array.from({ length: 32 }, () => openEventStream(`${url}/dev/inbox/events`)));
    try {
      assert.ok(open.every((s) => s.status === 200));
      const res = await fetch(`${url}/dev/inbox/events`);
      assert.equal(res.status, 429);
      const body = (await res.json()) as { status: boolean; error: { code: string } };
      assert.equal(body.status, false);
      assert.equal(body.error.code, 'RATE_LIMITED');
    } finally {
      for (const s of open) s.close();
    }
  });
});

forEachDatabase('the inbox feed stops with the app', (kind) => {
  it('ends open streams at close instead of waiting for them', async () => {
    const h = await createHarness(kind);
    let closed = false;
    try {
      const url = await listen(h);
      const stream = await openEventStream(`${url}/dev/inbox/events`);
      await stream.waitFor((e) => e.event === 'snapshot');
      const started = Date.now();
      await h.app.close();
      await stream.ended;
      assert.ok(Date.now() - started < 2000, `closing took ${Date.now() - started} ms`);
      assert.equal(h.services.inboxFeed?.subscribers, 0);
      closed = true;
    } finally {
      if (!closed) await h.app.close();
      await h.close();
    }
  });
});

describe('across instances on PostgreSQL', { skip: process.env.TEST_DATABASE_URL ? false : 'no PostgreSQL' }, () => {
  let a: Harness;
  let b: Harness;
  before(async () => {
    a = await createHarness('postgres');
    b = await createHarness('postgres', { env: { DATABASE_URL: String(a.config.DATABASE_URL) } });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it("shows a message another instance sent, and a verify another instance answered", async () => {
    const url = await listen(a);
    const stream = await openEventStream(`${url}/dev/inbox/events`);
    try {
      await stream.waitFor((e) => e.event === 'snapshot');
      const token = await b.token();
      const created = await createVerification(b, token);
      const sent = sentMessage(await stream.waitFor(isSent(created.id), 5000), created.id);
      assert.equal(sent.code, created.otp);
      const verified = await b.call('POST', '/v1/otp/verify', token, { id: created.id, otp: created.otp });
      assert.equal(verified.statusCode, 200, verified.body);
      await stream.waitFor(isState(created.id, 'SUCCESS'), 5000);
    } finally {
      stream.close();
    }
  });
});
