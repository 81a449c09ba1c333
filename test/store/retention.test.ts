import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { pruneHistory } from '../../src/store/retention.js';
import { createLookup, createVerification } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

const day = 86_400_000;

/** RETENTION_DAYS: old history goes, records and what still matters stay. */
forEachDatabase('history retention', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  });
  after(() => h.close());

  const count = async (table: 'events' | 'messages' | 'send_jobs' | 'verifications', column: string, id: string) => {
    const rows = await h.services.db.db.selectFrom(table).select(column as never).where(column as never, '=', id as never).execute();
    return rows.length;
  };

  it('deletes old sent messages, finished jobs and settled events, and keeps verifications and pending events', async () => {
    const client = await h.client();
    const token = await h.token(undefined, client);
    const settled = await createVerification(h, token);
    const pending = await createVerification(h, token, { webhookUrl: 'http://127.0.0.1:9/never-answers' });
    await h.services.sendWorker.idle();
    for (const v of [settled, pending]) {
      assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp })).statusCode, 200);
    }
    assert.equal(await count('messages', 'verification_id', settled.id), 1);
    assert.equal(await count('events', 'verification_id', settled.id), 1);

    const cutoff = new Date(h.clock.now().getTime() + 1);
    // Nothing is old enough yet when the cut-off lies before it.
    assert.equal(await pruneHistory(h.services.db.db, new Date(cutoff.getTime() - 30 * day)), 0);

    h.clock.advance(31 * day);
    const removed = await pruneHistory(h.services.db.db, cutoff);
    assert.ok(removed >= 5, `removed ${removed}`);
    assert.equal(await count('messages', 'verification_id', settled.id), 0);
    assert.equal(await count('send_jobs', 'verification_id', settled.id), 0);
    assert.equal(await count('events', 'verification_id', settled.id), 0, 'a settled event (no destination) goes');
    assert.equal(await count('events', 'verification_id', pending.id), 1, 'an event still to deliver stays');
    assert.equal(await count('verifications', 'id', settled.id), 1, 'the verification record stays');
    // A fresh token: the first one expired with the month that passed.
    const fetched = await h.call('GET', `/v1/otp/${settled.id}`, await h.token(undefined, client));
    assert.equal(fetched.statusCode, 200);
  });

  it('deletes lookups older than the cut-off, and keeps newer ones', async () => {
    const c = await h.client(['lookup:request', 'lookup:status']);
    // A fresh token at each step: a day outlives any token.
    const token = () => h.token(['lookup:request', 'lookup:status'], c);
    const old = await createLookup(h, await token());
    h.clock.advance(day);
    const recent = await createLookup(h, await token());
    const lookups = async () =>
      (await h.services.db.db.selectFrom('lookups').select('id').where('id', 'in', [old.id, recent.id]).execute()).map((r) => r.id).sort();
    assert.deepEqual(await lookups(), [old.id, recent.id].sort());
    assert.ok((await pruneHistory(h.services.db.db, new Date(Date.parse(recent.createdAt) - 1))) >= 1);
    assert.deepEqual(await lookups(), [recent.id]);
    assert.equal((await h.call('GET', `/v1/lookup/${old.id}`, await token())).statusCode, 404);
    assert.equal((await h.call('GET', `/v1/lookup/${recent.id}`, await token())).statusCode, 200);
  });

  it('deletes prefix blocks and country throttles that ended before the cut-off, and daily send counts of days before it', async () => {
    const db = h.services.db.db;
    const now = h.clock.now();
    const at = (days: number) => new Date(now.getTime() + days * day);
    const client = await h.client();
    await db
      .insertInto('prefix_blocks')
      .values([
        { prefix: '+2348030000', blocked_at: at(-3), blocked_until: at(-2) },
        { prefix: '+2348030001', blocked_at: at(-1), blocked_until: at(1) },
      ])
      .execute();
    const throttle = { country_code: '+234', provider: 'log', sends: 300, verified: 3 };
    await db
      .insertInto('country_throttles')
      .values([
        { ...throttle, region_code: 'NG', throttled_at: at(-3), throttled_until: at(-2) },
        { ...throttle, region_code: 'GH', country_code: '+233', throttled_at: at(-1), throttled_until: at(1) },
      ])
      .execute();
    const dayOf = (d: Date) => d.toISOString().slice(0, 10);
    await db
      .insertInto('client_daily_sends')
      .values([
        { client_id: client.clientId, day: dayOf(at(-3)), sends: 5 },
        { client_id: client.clientId, day: dayOf(now), sends: 2 },
      ])
      .execute();
    assert.ok((await pruneHistory(db, at(-1))) >= 3);
    assert.deepEqual((await db.selectFrom('prefix_blocks').select('prefix').execute()).map((r) => r.prefix), ['+2348030001']);
    assert.deepEqual((await db.selectFrom('country_throttles').select('region_code').execute()).map((r) => r.region_code), ['GH']);
    const days = await db.selectFrom('client_daily_sends').select('sends').where('client_id', '=', client.clientId).execute();
    assert.deepEqual(days.map((r) => r.sends), [2]);
  });

  it('deletes budgeted spend of days and months that ended before the cut-off, and keeps the day and month it falls in', async () => {
    const db = h.services.db.db;
    const client = await h.client();
    const spend = (period: 'day' | 'month', starts: string) => ({ client_id: client.clientId, period, starts, spent: '1.5' });
    await db
      .insertInto('client_spend')
      .values([spend('day', '2026-10-30'), spend('day', '2026-11-14'), spend('day', '2026-11-15'), spend('month', '2026-10-01'), spend('month', '2026-11-01')])
      .execute();
    assert.ok((await pruneHistory(db, new Date('2026-11-15T08:00:00Z'))) >= 3);
    const left = await db.selectFrom('client_spend').select(['period', sql<string>`starts::text`.as('starts')]).where('client_id', '=', client.clientId).orderBy('starts').execute();
    assert.deepEqual(left, [
      { period: 'month', starts: '2026-11-01' },
      { period: 'day', starts: '2026-11-15' },
    ]);
    // A month that ended the day before the cut-off goes with it.
    assert.ok((await pruneHistory(db, new Date('2026-12-01T00:00:00Z'))) >= 2);
    assert.equal((await db.selectFrom('client_spend').select('period').where('client_id', '=', client.clientId).execute()).length, 0);
  });
});
