import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runAdminCommand } from '../../src/admin/commands.js';
import { adminDeps } from '../../src/admin/deps.js';
import { expectV1Error } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';
import { withSecondInstance } from '../support/second-instance.js';

const limit = 4;
let range = 0;
/** Local numbers of a range (+234 803 RRRR xxx) no other test of this run uses: `n` is the last 3 digits. */
const freshRange = (): ((n: number) => string) => {
  range += 1;
  const r = String((process.pid * 31 + range * 7) % 10_000).padStart(4, '0');
  return (n) => `0803${r}${String(n).padStart(3, '0')}`;
};

/** Contract 10: creates towards one prefix, across all clients, capped; the prefix is then blocked for a while. */
forEachDatabase('prefix velocity', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { PREFIX_LIMIT_COUNT: String(limit), PREFIX_LIMIT_WINDOW_SECONDS: '600', PREFIX_BLOCK_SECONDS: '3600' } });
  });
  after(() => h.close());

  const create = (app: typeof h.app, token: string, phoneNumber: string) =>
    app.inject({ method: 'POST', url: '/v1/otp/request', headers: { authorization: `Bearer ${token}` }, payload: { countryCode: '+234', phoneNumber } });

  it('blocks a prefix past PREFIX_LIMIT_COUNT creates across clients, with 403 naming it, for PREFIX_BLOCK_SECONDS', async () => {
    const number = freshRange();
    const a = await h.token();
    const b = await h.token();
    for (let n = 0; n < limit; n += 1) assert.equal((await create(h.app, n % 2 === 0 ? a : b, number(n))).statusCode, 200);
    const refused = expectV1Error(await create(h.app, a, number(limit)), 403, 'NUMBER_NOT_ALLOWED');
    const prefix = `+234${number(0).slice(1, -3)}`;
    assert.match(refused.error.details?.[0]?.issue ?? '', new RegExp(`^the prefix \\${prefix} .* is blocked until `));
    // Past the window the count is gone, but the block holds until its end.
    h.clock.advance(601_000);
    expectV1Error(await create(h.app, await h.token(), number(limit + 1)), 403, 'NUMBER_NOT_ALLOWED');
    h.clock.advance(3000_000);
    assert.equal((await create(h.app, await h.token(), number(limit + 2))).statusCode, 200, 'the block has ended');
    // Another range was never touched.
    assert.equal((await create(h.app, await h.token(), freshRange()(0))).statusCode, 200);
  });

  it(`admits exactly ${limit} of 16 simultaneous creates towards one prefix`, async () => {
    const number = freshRange();
    const token = await h.token();
    const answers = await Promise.all(Array.from({ length: 16 }, (_, n) => create(h.app, token, number(n))));
    assert.equal(answers.filter((r) => r.statusCode === 200).length, limit, answers.map((r) => r.statusCode).join(','));
    for (const r of answers.filter((x) => x.statusCode !== 200)) expectV1Error(r, 403, 'NUMBER_NOT_ALLOWED');
  });

  it(
    `admits exactly ${limit} of 40 simultaneous creates towards one prefix across two instances`,
    { skip: kind === 'pglite' ? 'the embedded database admits one process' : false },
    async () => {
      const env = { PREFIX_LIMIT_COUNT: String(limit), PREFIX_LIMIT_WINDOW_SECONDS: '600', PREFIX_BLOCK_SECONDS: '3600' };
      await withSecondInstance(h, env, async (other) => {
        const number = freshRange();
        const tokens = [await h.token(), await h.token()];
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, n) => create(n % 2 === 0 ? h.app : other.app, tokens[n % 2] ?? '', number(n))),
        );
        assert.equal(answers.filter((r) => r.statusCode === 200).length, limit, answers.map((r) => r.statusCode).join(','));
        for (const r of answers.filter((x) => x.statusCode !== 200)) expectV1Error(r, 403, 'NUMBER_NOT_ALLOWED');
      });
    },
  );

  it('lists blocks in force and lifts one with the operator commands (blocks list, blocks lift); a lifted prefix counts afresh', async () => {
    const number = freshRange();
    const prefix = `+234${number(0).slice(1, -3)}`;
    const token = await h.token();
    const admin = (command: Parameters<typeof runAdminCommand>[1]) => runAdminCommand(adminDeps(h.services), command);
    for (let n = 0; n <= limit; n += 1) await create(h.app, token, number(n));
    expectV1Error(await create(h.app, token, number(limit + 1)), 403, 'NUMBER_NOT_ALLOWED');
    const listed = await admin({ name: 'blocks.list' });
    assert.ok(listed.ok);
    const block = (listed.value as { prefix: string; blockedAt: string; blockedUntil: string }[]).find((b) => b.prefix === prefix);
    assert.deepEqual(block && Date.parse(block.blockedUntil) - Date.parse(block.blockedAt), 3600_000);
    assert.deepEqual(await admin({ name: 'blocks.lift', prefix }), { ok: true, value: { lifted: prefix } });
    assert.deepEqual(await admin({ name: 'blocks.lift', prefix }), { ok: false, error: `no block in force on ${prefix}` });
    assert.equal((await admin({ name: 'blocks.lift', prefix: '2348031234' })).ok, false, 'not a prefix');
    const after = await admin({ name: 'blocks.list' });
    assert.ok(after.ok && !(after.value as { prefix: string }[]).some((b) => b.prefix === prefix));
    // The creates that tripped the block are still in the window, but count no more.
    h.clock.advance(1000);
    for (let n = 10; n < 10 + limit; n += 1) assert.equal((await create(h.app, token, number(n))).statusCode, 200);
    expectV1Error(await create(h.app, token, number(10 + limit)), 403, 'NUMBER_NOT_ALLOWED');
  });

  it('never counts test numbers', async () => {
    const number = freshRange();
    const c = await h.client();
    const token = await h.token(undefined, c);
    for (let n = 0; n < limit + 2; n += 1) {
      const added = await runAdminCommand(adminDeps(h.services), { name: 'clients.test-numbers.add', id: c.clientId, number: `+234${number(n).slice(1)}`, code: '123456' });
      assert.ok(added.ok);
      assert.equal((await create(h.app, token, number(n))).statusCode, 200);
    }
    for (let n = 100; n < 100 + limit; n += 1) assert.equal((await create(h.app, token, number(n))).statusCode, 200, 'the range is still open');
  });
});
