import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runAudited } from '../../src/admin/audited.js';
import { runAdminCommand, type AdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { workerDeps } from '../../src/server.js';
import { createVerification, e164Of, expectV1Error, nextLocalNumber } from '../support/api.js';
import { TestClock } from '../support/clock.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

/** Contract 20: a person's data, erased by the client (DELETE), by the operator (erase) and by age. */
forEachDatabase("a person's data", (kind) => {
  let h: Harness;
  let hooks: Receiver;
  before(async () => {
    hooks = await startReceiver();
    h = await createHarness(kind, {
      clock: new TestClock(Date.now()),
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', VERIFICATION_RETENTION_DAYS: '30', RETENTION_DAYS: '0' },
    });
  });
  after(async () => {
    await h.close();
    await hooks.close();
  });

  const admin = (command: AdminCommand) => runAdminCommand(adminDeps(h.services), command);
  const row = (id: string) => h.services.db.db.selectFrom('verifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const count = async (table: 'messages' | 'events' | 'send_jobs' | 'idempotency_keys', id: string) =>
    (await h.services.db.db.selectFrom(table).select('verification_id').where('verification_id', '=', id).execute()).length;

  describe('DELETE /v1/otp/{id}', () => {
    it('erases a verified one: 204, then 404 everywhere; its number kept as its prefix, nothing else of it', async () => {
      const token = await h.token(['otp:send', 'otp:verify']);
      const v = await createVerification(h, token, { reference: 'user-42', webhookUrl: `${hooks.url}/erase`, signals: { ip: '203.0.113.9', deviceId: 'dev-1' } });
      assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp })).statusCode, 200);
      await h.services.sendWorker.idle();
      await h.services.webhookWorker.idle();
      assert.ok((await count('messages', v.id)) > 0 && (await count('events', v.id)) > 0, 'a text and an event to erase');

      const erased = await h.call('DELETE', `/v1/otp/${v.id}`, token);
      assert.equal(erased.statusCode, 204);
      assert.equal(erased.body, '');
      expectV1Error(await h.call('GET', `/v1/otp/${v.id}`, token), 404, 'NOT_FOUND');
      expectV1Error(await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp }), 404, 'NOT_FOUND');
      expectV1Error(await h.call('GET', `/v1/otp/${v.id}/webhooks`, token), 404, 'NOT_FOUND');
      expectV1Error(await h.call('DELETE', `/v1/otp/${v.id}`, token), 404, 'NOT_FOUND');

      const kept = await row(v.id);
      assert.equal(kept.phone_number, `${v.phoneNumber.slice(0, -3)}XXX`);
      assert.deepEqual(
        { otp: kept.otp, reference: kept.reference, webhook: kept.webhook_url, signals: kept.signals, ip: kept.signal_ip, device: kept.signal_device, status: kept.status },
        { otp: '', reference: null, webhook: null, signals: null, ip: null, device: null, status: 'SUCCESS' },
      );
      assert.ok(kept.erased_at);
      assert.deepEqual([await count('messages', v.id), await count('events', v.id), await count('send_jobs', v.id)], [0, 0, 0]);
      // The client's stats still count it.
      const stats = (await h.call('GET', '/v1/stats', token)).json() as { data: { verified: number }[] };
      assert.equal(stats.data.reduce((n, r) => n + r.verified, 0), 1);
    });

    it("ends a pending one with nothing more sent or told; another client's, or a token without otp:send, cannot", async () => {
      const owner = await h.client(['otp:send', 'otp:verify']);
      const token = await h.token(['otp:send', 'otp:verify'], owner);
      const v = await createVerification(h, token, { webhookUrl: `${hooks.url}/pending` });
      const other = await h.token(['otp:send', 'otp:verify']);
      expectV1Error(await h.call('DELETE', `/v1/otp/${v.id}`, other), 404, 'NOT_FOUND');
      const verifyOnly = await h.token(['otp:verify'], owner);
      expectV1Error(await h.call('DELETE', `/v1/otp/${v.id}`, verifyOnly), 403, 'INSUFFICIENT_SCOPE');
      expectV1Error(await h.call('DELETE', '/v1/otp/not-an-id', token), 404, 'NOT_FOUND');

      assert.equal((await h.call('DELETE', `/v1/otp/${v.id}`, token)).statusCode, 204);
      assert.deepEqual({ status: (await row(v.id)).status, reason: (await row(v.id)).failure_reason }, { status: 'FAILED', reason: 'CANCELED' });
      h.clock.advance(3_600_000);
      await h.services.verifications.expireDue();
      await h.services.webhookWorker.idle();
      assert.equal(await count('events', v.id), 0, 'no event for an erased verification');
      assert.equal(hooks.requests.filter((r) => r.url === '/hooks/pending').length, 0);
    });
  });

  it("otp-service erase: every client's verifications of a number, its lookups, its list entries' notes; the audit keeps its prefix", async () => {
    const local = nextLocalNumber();
    const number = e164Of(local);
    const a = await h.token(['otp:send', 'otp:verify', 'lookup:request']);
    const b = await h.token(['otp:send', 'otp:verify']);
    const first = await createVerification(h, a, { phoneNumber: local });
    const second = await createVerification(h, b, { phoneNumber: local });
    const elsewhere = await createVerification(h, a);
    // The codes are in the log provider's inbox before the erase (they reach it just after the create answers).
    await h.services.sendWorker.idle();
    assert.equal((await h.call('POST', '/v1/lookup/request', a, { countryCode: '+234', phoneNumber: local })).statusCode, 200);
    assert.ok((await admin({ name: 'lists.add', kind: 'allow', value: number, clientId: null, note: 'Ada Obi, QA' })).ok);

    const refused = await admin({ name: 'erase', phoneNumber: '08031234567', clientId: null });
    assert.equal(refused.ok, false);
    const result = await runAudited({ ...adminDeps(h.services), audit: h.services.audit, clock: h.clock }, 'cli', { name: 'erase', phoneNumber: number, clientId: null });
    assert.ok(result.ok, result.ok ? '' : result.error);
    assert.deepEqual(result.value, { phoneNumber: `${number.slice(0, -3)}XXX`, clientId: null, verifications: 2, messages: 2, webhookEvents: 0, lookups: 1, listEntries: 1 });

    expectV1Error(await h.call('GET', `/v1/otp/${first.id}`, a), 404, 'NOT_FOUND');
    expectV1Error(await h.call('GET', `/v1/otp/${second.id}`, b), 404, 'NOT_FOUND');
    assert.equal((await h.call('GET', `/v1/otp/${elsewhere.id}`, a)).statusCode, 200, 'another number is untouched');
    const entry = await h.services.db.db.selectFrom('number_lists').selectAll().where('value', '=', number).executeTakeFirstOrThrow();
    assert.deepEqual({ kind: entry.kind, note: entry.note }, { kind: 'allow', note: null }, 'the entry still works, without what was written of the person');
    const [audit] = await h.services.audit.latest(1);
    assert.deepEqual({ action: audit?.action, target: audit?.target }, { action: 'erase', target: `${number.slice(0, -3)}XXX` });
    assert.ok(!JSON.stringify(await h.services.audit.latest(5)).includes(number), 'the audit log holds no erased number');
  });

  it('VERIFICATION_RETENTION_DAYS erases what is older, in the housekeeping round, and keeps what is newer', async () => {
    const client = await h.client(['otp:send', 'otp:verify']);
    const old = await createVerification(h, await h.token(['otp:send', 'otp:verify'], client));
    h.clock.advance(31 * 86_400_000);
    const token = await h.token(['otp:send', 'otp:verify'], client);
    const recent = await createVerification(h, token);
    await workerDeps(h.services, false).housekeeping();
    expectV1Error(await h.call('GET', `/v1/otp/${old.id}`, token), 404, 'NOT_FOUND');
    assert.ok((await row(old.id)).erased_at);
    assert.equal((await h.call('GET', `/v1/otp/${recent.id}`, token)).statusCode, 200);
  });
});
