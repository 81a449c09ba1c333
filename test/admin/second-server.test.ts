import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { nextLocalNumber } from '../support/api.js';
import { built, runNode } from '../support/processes.js';
import { kill, startServerChild, type ChildService } from '../webhooks/processes.js';
import { embeddedDataDir } from '../support/databases.js';

/**
 * The embedded database admits one process. A second server started on the same DATA_DIR must say so and
 * stop before it opens the database: opening it beside a first server that is writing ended in `Aborted()`
 * from WebAssembly (issue 10, item 9). Real processes, the first under a small load.
 */
describe('a second server on the same DATA_DIR', () => {
  let dataDir: string;
  let first: (ChildService & { url: string }) | null = null;
  let env: Record<string, string>;
  before(() => {
    dataDir = embeddedDataDir('otp-second-');
    env = { DATA_DIR: dataDir, CLIENT_RATE_LIMIT_PER_SECOND: '0', PHONE_COOLDOWN_SECONDS: '0', PHONE_LIMIT_COUNT: '1000' };
  });
  after(async () => {
    if (first) await kill(first, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is refused with the clear message, before it opens the database, while the first is under load', async () => {
    const running = await startServerChild(env);
    first = running;
    // The first start prints a development client (contract 7).
    const clientId = /client_id:\s+(\S+)/.exec(running.output())?.[1];
    const clientSecret = /client_secret:\s+(\S+)/.exec(running.output())?.[1];
    assert.ok(clientId && clientSecret, running.output());
    const tokenRes = await fetch(`${running.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
    });
    assert.equal(tokenRes.status, 200);
    const { accessToken } = (await tokenRes.json()) as { accessToken: string };

    // A small load: four callers creating and reading verifications back to back.
    let loading = true;
    const statuses: number[] = [];
    const caller = async () => {
      while (loading) {
        const created = await fetch(`${running.url}/v1/otp/request`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
          body: JSON.stringify({ countryCode: '+234', phoneNumber: nextLocalNumber() }),
        });
        statuses.push(created.status);
        const { data } = (await created.json()) as { data?: { id: string } };
        if (!data) continue;
        const read = await fetch(`${running.url}/v1/otp/${data.id}`, { headers: { authorization: `Bearer ${accessToken}` } });
        statuses.push(read.status);
        await read.arrayBuffer();
      }
    };
    const load = Promise.all([caller(), caller(), caller(), caller()]);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await runNode([built('main')], {
        ...env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      });
      assert.equal(second.code, 1, second.stderr);
      assert.match(second.stderr, /another server is already running on this DATA_DIR/);
      assert.doesNotMatch(second.stderr + second.stdout, /Aborted|RuntimeError/);
      // It stopped before opening the database: no migration ran, no development client was made.
      assert.doesNotMatch(second.stdout, /embedded database|development client/);
    } finally {
      loading = false;
      await load;
    }
    assert.ok(statuses.length > 0);
    assert.deepEqual([...new Set(statuses)], [200]);
    // The first server kept working throughout, and still does.
    assert.equal((await fetch(`${running.url}/readyz`)).status, 200);
    assert.equal(await kill(running, 'SIGTERM'), 0, 'a clean shutdown');
  });
});
