import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/** Creates are committed in groups; every create in a group is decided on its own, seeing those before it. */
forEachDatabase('group-committed creates', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { PHONE_LIMIT_COUNT: '2', PHONE_COOLDOWN_SECONDS: '0' } });
  });
  after(() => h.close());

  it('applies the phone limit per number inside a group and stores exactly the accepted ones with their jobs', async () => {
    const token = await h.token();
    const numbers = Array.from({ length: 10 }, () => nextLocalNumber());
    const answers = await Promise.all(
      numbers.flatMap((phoneNumber) =>
        [1, 2, 3].map(() => h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber })),
      ),
    );
    const ok = answers.filter((a) => a.statusCode === 200);
    assert.equal(ok.length, 20, 'two per number');
    assert.equal(answers.filter((a) => a.statusCode === 429).length, 10, 'the third of each number refused');
    const ids = ok.map((a) => (a.json() as { data: { id: string } }).data.id);
    const db = h.services.db.db;
    const stored = await db.selectFrom('verifications').select('id').where('id', 'in', ids).execute();
    const jobs = await db.selectFrom('send_jobs').select('verification_id').where('verification_id', 'in', ids).execute();
    assert.equal(stored.length, 20);
    assert.equal(jobs.length, 20);
  });
});
