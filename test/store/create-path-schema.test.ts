import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { createVerification } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * What a create writes, and what it asks the database to check (migration 0011): a foreign-key check per row
 * cost the create path half its throughput when its plan went stale, for a rule the code keeps by itself.
 */
forEachDatabase('the create path in the schema', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind);
  });
  after(() => h.close());

  it('asks for no foreign-key check on the rows a create inserts', async () => {
    const { rows } = await sql<{ table: string; name: string }>`
      SELECT conrelid::regclass::text AS table, conname AS name FROM pg_constraint
      WHERE contype = 'f' AND conrelid IN ('verifications'::regclass, 'send_jobs'::regclass)`.execute(h.services.db.db);
    assert.deepEqual(rows, []);
  });

  it('still writes each verification for an existing client, with its send job', async () => {
    const c = await h.client();
    const v = await createVerification(h, await h.token(undefined, c));
    const { rows } = await sql<{ client: string | null; jobs: number }>`
      SELECT (SELECT c.id::text FROM clients c WHERE c.id = v.client_id) AS client,
        (SELECT count(*)::int FROM send_jobs j WHERE j.verification_id = v.id) AS jobs
      FROM verifications v WHERE v.id = ${v.id}`.execute(h.services.db.db);
    assert.deepEqual(rows, [{ client: c.clientId, jobs: 1 }]);
  });
});
