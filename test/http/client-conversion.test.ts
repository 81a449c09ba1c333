import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { relaySend } from '../../src/http/relays/relay-send.js';
import { expectV1Error, type RecordBody } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { readConversion } from '../support/throttle-calls.js';

/** One number per country, each country below the per-country sample on its own. */
const spread = (i: number) => [
  { countryCode: '+234', phoneNumber: `0805${String(1000 + i).padStart(4, '0')}321` },
  { countryCode: '+233', phoneNumber: `020${String(1000 + i).padStart(4, '0')}321` },
  { countryCode: '+27', phoneNumber: `083${String(1000 + i).padStart(4, '0')}321` },
  { countryCode: '+254', phoneNumber: `072${String(100 + i).padStart(3, '0')}4321` },
  { countryCode: '+44', phoneNumber: `07700${String(100 + i).padStart(3, '0')}321` },
  { countryCode: '+33', phoneNumber: `06${String(100 + i).padStart(3, '0')}54321` },
];

/**
 * Contract 14: a client's conversion across all countries counts too, so that an attack spread thin over many
 * countries (each under MIN_CONVERSION_SAMPLE) trips a throttle: the client's creates are then capped at the
 * prefix limit, whatever the country.
 */
forEachDatabase('client conversion across countries', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, {
      env: { MIN_CONVERSION: '0.2', MIN_CONVERSION_SAMPLE: '6', PREFIX_LIMIT_COUNT: '3', PREFIX_LIMIT_WINDOW_SECONDS: '600', PREFIX_BLOCK_SECONDS: '3600' },
    });
  });
  after(() => h.close());

  const create = (token: string, body: object) => h.call('POST', '/v1/otp/request', token, body);

  it('counts a delivered relayed code as verified: a client that only relays is not throttled for it', async () => {
    const relaying = await h.client();
    for (const body of spread(7)) {
      assert.equal(await relaySend(h.services.verifications, { clientId: relaying.clientId, scopes: relaying.scopes, phone: `${body.countryCode}${body.phoneNumber.slice(1)}`, code: '482913' }), null);
    }
    await h.services.sendWorker.idle();
    const sent = await h.services.db.db
      .selectFrom('provider_messages')
      .innerJoin('verifications', 'verifications.id', 'provider_messages.verification_id')
      .select(['provider_messages.provider', 'provider_messages.message_id'])
      .where('verifications.client_id', '=', relaying.clientId)
      .execute();
    assert.equal(sent.length, 6);
    for (const m of sent) await h.services.deliveries.recordReceipt(m.provider, { messageId: m.message_id, status: 'DELIVERED', detail: null, at: null });
    h.clock.advance(121_000);
    await readConversion(h.services);
    h.clock.advance(1000);
    const listed = await runAdminCommand(adminDeps(h.services), { name: 'blocks.list' });
    assert.ok(listed.ok && !(listed.value as { clientId?: string }[]).some((b) => b.clientId === relaying.clientId), 'not throttled');
    for (const body of spread(8)) {
      assert.equal(await relaySend(h.services.verifications, { clientId: relaying.clientId, scopes: relaying.scopes, phone: `${body.countryCode}${body.phoneNumber.slice(1)}`, code: '482913' }), null);
    }
  });

  it('throttles a client whose never-verified sends are spread over six countries, not the others', async () => {
    const attacker = await h.token();
    const other = await h.token();
    for (const body of spread(0)) assert.equal((await create(attacker, body)).statusCode, 200);
    await h.services.sendWorker.idle();
    // Codes younger than two minutes may still be typed: not judged yet.
    h.clock.advance(60_000);
    await readConversion(h.services);
    assert.equal((await create(attacker, spread(5)[0] ?? {})).statusCode, 200, 'not judged within the first two minutes');
    h.clock.advance(61_000);
    await readConversion(h.services);
    // The test clock stands still between steps: the creates under the throttle come after it.
    h.clock.advance(1000);
    // No country reached the sample; the client did: it is capped at the prefix limit (3) now.
    for (const body of spread(1).slice(0, 3)) assert.equal((await create(attacker, body)).statusCode, 200);
    const refused = expectV1Error(await create(attacker, spread(1)[3] ?? {}), 429, 'RATE_LIMITED');
    assert.match(refused.message, /MIN_CONVERSION/);
    for (const body of spread(2)) assert.equal((await create(other, body)).statusCode, 200, 'another client goes on');
    // The operator sees it (blocks list) and lifts it (blocks lift CLIENT_ID).
    const { client_id: clientId } = await h.services.db.db.selectFrom('verifications').select('client_id').where('phone_number', '=', '+2348051000321').executeTakeFirstOrThrow();
    const listed = await runAdminCommand(adminDeps(h.services), { name: 'blocks.list' });
    assert.ok(listed.ok && (listed.value as { clientId?: string }[]).some((b) => b.clientId === clientId));
    assert.deepEqual(await runAdminCommand(adminDeps(h.services), { name: 'blocks.lift', prefix: clientId }), { ok: true, value: { lifted: clientId } });
    h.clock.advance(1000);
    assert.equal((await create(attacker, spread(1)[3] ?? {})).statusCode, 200, 'counted afresh after the lift');
  });

  it('leaves a client whose codes are verified alone', async () => {
    const token = await h.token();
    for (const body of spread(3)) {
      const v = (await create(token, body)).json<{ data: RecordBody }>().data;
      assert.equal((await h.call('POST', '/v1/otp/verify', token, { id: v.id, otp: v.otp })).statusCode, 200);
    }
    await h.services.sendWorker.idle();
    h.clock.advance(121_000);
    await readConversion(h.services);
    for (const body of spread(4)) assert.equal((await create(token, body)).statusCode, 200);
  });
});
