import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { after, before, it } from 'node:test';
import { createVerification, e164Of, expectV1Error, nextLocalNumber } from '../support/api.js';
import { forEachDatabase } from '../support/each-database.js';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * Small, so that the test is quick; the requests below must answer within about this. Not smaller: the creates
 * before and after the hold must succeed within it too, and at 400 ms one took longer on a busy machine (six test
 * processes on two cores) and was itself a 503. A second at most, so that Retry-After stays 1.
 */
const timeoutMs = 1_000;
/** What "within about DATABASE_TIMEOUT_MS" allows for: scheduling on a busy machine. */
const slackMs = 600;

/** The answer, and how long it took; a request that hangs fails the test instead of holding it up. */
async function timed(request: Promise<LightMyRequestResponse>): Promise<{ res: LightMyRequestResponse; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('the request hung')), 4 * timeoutMs + 2_000);
  });
  try {
    const res = await Promise.race([request, hung]);
    return { res, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

function expectUnavailable({ res, ms }: { res: LightMyRequestResponse; ms: number }): void {
  const body = expectV1Error(res, 503, 'UNAVAILABLE');
  assert.match(body.message, /temporarily unavailable/);
  assert.equal(res.headers['retry-after'], '1');
  assert.ok(ms < timeoutMs + slackMs, `answered in ${ms} ms`);
}

/**
 * Contract 5 and 6: a database that does not answer within DATABASE_TIMEOUT_MS is a 503 UNAVAILABLE with
 * Retry-After, nothing half done, and the service answers again without a restart once the database does.
 * Here the database is held busy: the embedded one's single session by a long transaction, PostgreSQL's
 * table by a lock another session holds (lock_timeout). A frozen server is test/http/database-frozen.test.ts.
 */
forEachDatabase('database time-out', (kind) => {
  let h: Harness;
  before(async () => {
    h = await createHarness(kind, { env: { DATABASE_TIMEOUT_MS: String(timeoutMs) } });
  });
  after(() => h.close());

  /** Keeps the database busy until the returned function is called. */
  async function holdDatabase(): Promise<() => Promise<void>> {
    if (kind === 'pglite') {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const holding = new Promise<void>((resolve) => (started = resolve));
      const held = h.services.db.db.transaction().execute(async () => {
        started();
        await gate;
      });
      await holding;
      return async () => {
        release();
        await held.catch(() => undefined);
      };
    }
    const url = h.config.DATABASE_URL;
    assert.ok(url);
    const side = new pg.Client({ connectionString: url });
    await side.connect();
    await side.query('BEGIN');
    await side.query('LOCK TABLE verifications IN ACCESS EXCLUSIVE MODE');
    return async () => {
      await side.query('ROLLBACK');
      await side.end();
    };
  }

  it('answers create, fetch and verify with 503 UNAVAILABLE and Retry-After within the time-out, then recovers', async () => {
    const token = await h.token();
    const existing = await createVerification(h, token);
    const frozenNumber = nextLocalNumber();
    const letGo = await holdDatabase();
    try {
      const [create, fetch, verify] = await Promise.all([
        timed(h.call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: frozenNumber })),
        timed(h.call('GET', `/v1/otp/${existing.id}`, token)),
        timed(h.call('POST', '/v1/otp/verify', token, { id: existing.id, otp: existing.otp })),
      ]);
      expectUnavailable(create);
      expectUnavailable(fetch);
      expectUnavailable(verify);
      // The embedded database's single session is what is held, so readiness fails too; PostgreSQL still answers.
      const ready = await timed(h.app.inject({ method: 'GET', url: '/readyz' }));
      assert.equal(ready.res.statusCode, kind === 'pglite' ? 503 : 200);
      assert.ok(ready.ms < timeoutMs + slackMs, `readyz answered in ${ready.ms} ms`);
    } finally {
      await letGo();
    }

    // Nothing was half done: the refused create left no verification, the refused verify no change.
    const rows = await h.services.db.db
      .selectFrom('verifications')
      .select('id')
      .where('phone_number', '=', e164Of(frozenNumber))
      .execute();
    assert.equal(rows.length, 0);
    const fetched = await h.call('GET', `/v1/otp/${existing.id}`, token);
    assert.equal(fetched.statusCode, 200, fetched.body);
    assert.equal((fetched.json() as { data: { status: string } }).data.status, 'PENDING');

    // And it answers again, without a restart.
    const verified = await h.call('POST', '/v1/otp/verify', token, { id: existing.id, otp: existing.otp });
    assert.equal(verified.statusCode, 200, verified.body);
    await createVerification(h, token, { phoneNumber: frozenNumber });
    assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });

  it(
    'answers the token endpoint with 503 temporarily_unavailable when the database does not answer',
    // A client not seen before is read from the database; a lock on verifications does not hold clients up.
    { skip: kind === 'postgres' ? 'the lock held here is on verifications, not clients' : false },
    async () => {
      const c = await h.client(['otp:send']);
      const letGo = await holdDatabase();
      try {
        const issued = await timed(
          h.app.inject({
            method: 'POST',
            url: '/oauth/token',
            payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret },
          }),
        );
        assert.equal(issued.res.statusCode, 503, issued.res.body);
        assert.deepEqual(issued.res.json(), {
          error: 'temporarily_unavailable',
          error_description: 'The service is temporarily unavailable; try again later',
        });
        assert.equal(issued.res.headers['retry-after'], '1');
        assert.equal(issued.res.headers['cache-control'], 'no-store');
      } finally {
        await letGo();
      }
    },
  );
});
