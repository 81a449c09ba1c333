import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { createVerification } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * What a create asks of the database beyond its statements: no foreign-key check per row (migration 0011; its
 * plan went stale and halved create throughput, for a rule the code keeps by itself), and no JIT compiling.
 */
forEachDatabase('the create path in the database', (kind) => {
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

  it('runs every pooled session without JIT compiling (PostgreSQL)', { skip: kind === 'pglite' ? 'PGlite has no JIT' : false }, async () => {
    // Several sessions at once, so that more than the first connection of the pool is asked.
    const db = h.services.db.db;
    const shown = await Promise.all(
      Array.from({ length: 4 }, () =>
        db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ jit: string; pid: number }>`SELECT current_setting('jit') AS jit, pg_backend_pid() AS pid, pg_sleep(0.05)`.execute(trx);
          return rows[0];
        }),
      ),
    );
    assert.ok(new Set(shown.map((r) => r?.pid)).size > 1, 'more than one session');
    assert.deepEqual(new Set(shown.map((r) => r?.jit)), new Set(['off']));
  });
});
