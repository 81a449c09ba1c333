import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { e164Of, expectV1Error, nextLocalNumber, operatorCommand, type RecordBody, sendCounts } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { TestClock } from '../support/clock.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Received, type Receiver } from '../webhooks/helpers.js';

/**
 * Contract 18: the client's decision webhook. Its backend is a real HTTP server that checks each question's
 * signature with the standardwebhooks package (as a client's backend would) and answers as the test tells it.
 */
forEachDatabase('the decision webhook', (kind) => {
  let h: Harness;
  let backend: Receiver;
  /** What the backend answers next: a decision, a status without one, nothing at all, or a body that is not JSON. */
  let answer: 'allow' | 'deny' | 'maybe' | 'status-500' | 'silence' | 'garbage' = 'allow';
  before(async () => {
    // Started at the real time: the backend checks the signature's timestamp, as a real one does.
    h = await createHarness(kind, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, clock: new TestClock(Date.now()) });
    backend = await startReceiver((_req, res) => {
      if (answer === 'silence') return; // never answers: the service's time-out decides
      if (answer === 'status-500') return void res.writeHead(500).end();
      if (answer === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ decision: answer }));
    });
  });
  after(async () => {
    await backend.close();
    await h.close();
  });

  const admin = (command: AdminCommand) => operatorCommand(h.services, command);

  it('asks the backend before each send, signed with the webhook secret; deny is 403 customer_denied with nothing sent, allow sends', async () => {
    const client = await h.client();
    await admin({ name: 'clients.update', id: client.clientId, change: { decision: { url: `${backend.url}/decide`, timeoutMs: 1000 } } });
    const token = await h.token(undefined, client);
    const phone = nextLocalNumber();
    const create = () =>
      h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: phone, reference: 'order-7', signals: { ip: '198.51.100.7', deviceId: 'dev-7', platform: 'ios' } });

    answer = 'deny';
    const before = await sendCounts(h);
    const denied = expectV1Error(await create(), 403, 'NUMBER_NOT_ALLOWED');
    assert.deepEqual(denied.error.details?.at(-1), { factor: 'customer_denied', rule: 'decision', mode: 'enforce' });
    assert.deepEqual(await sendCounts(h), before, 'nothing written, sent nor queued');
    const asked = backend.requests.at(-1) as Received;
    assert.equal(asked.method, 'POST');
    assert.equal(asked.url, `${new URL(backend.url).pathname}/decide`);
    const question = new Webhook(client.webhookSecret).verify(asked.body, asked.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
    assert.equal(question.type, 'otp.decision');
    assert.deepEqual(
      { ...question.data, id: typeof question.data.id },
      {
        id: 'string',
        phoneNumber: e164Of(phone),
        countryCode: '+234',
        channel: 'SMS',
        reference: 'order-7',
        signals: { ip: '198.51.100.7', deviceId: 'dev-7', platform: 'ios' },
        risk: { verdict: 'allow', factors: [] },
      },
    );

    answer = 'allow';
    const allowed = await create();
    assert.equal(allowed.statusCode, 200, allowed.body);
    const record = allowed.json<{ data: RecordBody }>().data;
    const lastQuestion = JSON.parse((backend.requests.at(-1) as Received).body) as { data: { id: string } };
    assert.equal(lastQuestion.data.id, record.id, 'the question names the verification as it is created');
    assert.deepEqual(record.risk, { verdict: 'allow', factors: [] });
  });

  it('asks before a resend too, naming the verification: deny is 403 customer_denied with nothing sent, allow resends', async () => {
    const client = await h.client();
    await admin({ name: 'clients.update', id: client.clientId, change: { decision: { url: backend.url, timeoutMs: 1000 } } });
    const token = await h.token(undefined, client);
    answer = 'allow';
    const created = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber(), reference: 'order-8' });
    assert.equal(created.statusCode, 200, created.body);
    const record = created.json<{ data: RecordBody }>().data;
    h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
    const resend = () => h.app.inject({ method: 'POST', url: `/v1/otp/${record.id}/resend`, headers: { authorization: `Bearer ${token}` } });

    answer = 'deny';
    const asked = backend.requests.length;
    const before = await sendCounts(h);
    const denied = expectV1Error(await resend(), 403, 'NUMBER_NOT_ALLOWED');
    assert.deepEqual(denied.error.details?.at(-1), { factor: 'customer_denied', rule: 'decision', mode: 'enforce' });
    assert.deepEqual(await sendCounts(h), before, 'nothing sent nor queued');
    assert.equal(backend.requests.length, asked + 1);
    const question = new Webhook(client.webhookSecret).verify((backend.requests.at(-1) as Received).body, (backend.requests.at(-1) as Received).headers as Record<string, string>) as {
      data: Record<string, unknown>;
    };
    assert.deepEqual(
      { id: question.data.id, phoneNumber: question.data.phoneNumber, channel: question.data.channel, reference: question.data.reference },
      { id: record.id, phoneNumber: record.phoneNumber, channel: 'SMS', reference: 'order-8' },
    );

    answer = 'allow';
    const resent = await resend();
    assert.equal(resent.statusCode, 200, resent.body);
    assert.equal(resent.json<{ data: RecordBody }>().data.id, record.id);
  });

  it('applies the default when the backend is slow, fails or answers something else; deny as the default refuses', async () => {
    const client = await h.client();
    await admin({ name: 'clients.update', id: client.clientId, change: { decision: { url: backend.url, timeoutMs: 200 } } });
    const token = await h.token(undefined, client);
    const create = () => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber() });
    for (const a of ['silence', 'status-500', 'garbage', 'maybe'] as const) {
      answer = a;
      assert.equal((await create()).statusCode, 200, `${a}: the default (allow) applies`);
    }
    await admin({ name: 'clients.update', id: client.clientId, change: { decision: { fallback: 'deny' } } });
    answer = 'silence';
    const refused = expectV1Error(await create(), 403, 'NUMBER_NOT_ALLOWED');
    assert.match(refused.error.details?.[0]?.issue ?? '', /gave no answer \(timeout\) and its default is deny/);
    answer = 'allow';
    assert.equal((await create()).statusCode, 200, 'an answer wins over the default');
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const a of ['allow', 'timeout', 'error', 'invalid']) assert.match(metrics, new RegExp(`otp_decisions_total\\{answer="${a}"\\} [1-9]`), a);
  });

  it('in shadow mode a deny refuses nothing: the send goes out as shadow_block; a URL the service may not call is refused when set', async () => {
    const client = await h.client();
    await admin({ name: 'clients.update', id: client.clientId, change: { decision: { url: backend.url } } });
    await admin({ name: 'rules.set', rule: 'decision', mode: 'shadow', clientId: client.clientId });
    const shadowed = { verdict: 'shadow_block', factors: [{ factor: 'customer_denied', rule: 'decision', mode: 'shadow' }] };
    // Allowed at create, denied (in shadow) at its resend: the resend's factor joins the record's risk.
    answer = 'allow';
    const token = await h.token(undefined, client);
    const first = await h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber() });
    const id = first.json<{ data: RecordBody }>().data.id;
    assert.deepEqual(first.json<{ data: RecordBody }>().data.risk, { verdict: 'allow', factors: [] });
    h.clock.advance(h.config.PHONE_COOLDOWN_SECONDS * 1000);
    answer = 'deny';
    const resent = await h.app.inject({ method: 'POST', url: `/v1/otp/${id}/resend`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(resent.statusCode, 200, resent.body);
    assert.deepEqual(resent.json<{ data: RecordBody }>().data.risk, shadowed);
    assert.deepEqual((await h.call('GET', `/v1/otp/${id}`, token)).json<{ data: RecordBody }>().data.risk, shadowed, 'kept on the record');
    const res = await h.call('POST', '/v1/otp/request', await h.token(undefined, client), { countryCode: '+234', phoneNumber: nextLocalNumber() });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<{ data: RecordBody }>().data.risk, shadowed);
    const bad = await runAdminCommand(adminDeps(h.services), { name: 'clients.update', id: client.clientId, change: { decision: { url: 'ftp://example.com/decide' } } });
    assert.equal(bad.ok, false);
    assert.match(JSON.stringify(bad), /--decision-url/);
    const noUrl = await runAdminCommand(adminDeps(h.services), { name: 'clients.update', id: (await h.client()).clientId, change: { decision: { timeoutMs: 500 } } });
    assert.match(JSON.stringify(noUrl), /need a decision webhook: set --decision-url/);
    await admin({ name: 'clients.update', id: client.clientId, change: { decision: { url: null } } });
    answer = 'deny';
    const off = await h.call('POST', '/v1/otp/request', await h.token(undefined, client), { countryCode: '+234', phoneNumber: nextLocalNumber() });
    assert.equal(off.statusCode, 200, 'no webhook, nobody asked');
  });
});
