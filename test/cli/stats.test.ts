import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createVerification, nextLocalNumber } from '../support/api.js';
import { postgresSkip, embeddedDataDir } from '../support/databases.js';
import { createHarness, type Harness } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/processes.js';
import { runCommand } from '../support/command-line.js';

interface Row {
  clientId?: string;
  day: string;
  regionCode: string | null;
  countryCode: string;
  channel: string;
  sends: number;
  delivered: number;
  verified: number;
  cost: string;
  costPerVerified: string | null;
}

function jsonLines(stdout: string): Row[] {
  return stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Row);
}

const header = 'DAY\tREGION\tCOUNTRY\tCHANNEL\tSENDS\tDELIVERED\tVERIFIED\tCOST\tPER VERIFIED';

describe('otp-service stats on the embedded database, with the server running and then not', () => {
  let dir: string;
  let server: ServerProcess;
  let clientId: string;
  const today = new Date().toISOString().slice(0, 10);

  before(async () => {
    dir = embeddedDataDir('otp-stats-');
    server = await startServerProcess({ DATA_DIR: dir });
    const out = server.output();
    const id = /client_id:\s+(\S+)/.exec(out)?.[1];
    const secret = /client_secret:\s+(\S+)/.exec(out)?.[1];
    assert.ok(id && secret, out);
    clientId = id;
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: id, client_secret: secret, scope: 'otp:send otp:verify' }),
    });
    const { accessToken } = (await res.json()) as { accessToken: string };
    const call = (url: string, body: unknown) =>
      fetch(`${server.url}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
        body: JSON.stringify(body),
      });
    for (const body of [
      { countryCode: '+234', phoneNumber: nextLocalNumber() },
      { countryCode: '+234', phoneNumber: nextLocalNumber() },
      { countryCode: '+233', phoneNumber: '0241234569' },
    ]) {
      const created = await call('/v1/otp/request', body);
      assert.equal(created.status, 200);
      const { data } = (await created.json()) as { data: { id: string; otp: string; countryCode: string } };
      if (data.countryCode === '+233') assert.equal((await call('/v1/otp/verify', { id: data.id, otp: data.otp })).status, 200);
    }
  });
  after(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await server.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const expected = (withClient: boolean): Row[] => [
    { ...(withClient && { clientId }), day: today, regionCode: 'GH', countryCode: '+233', channel: 'SMS', sends: 1, delivered: 0, verified: 1, cost: '0', costPerVerified: '0' },
    { ...(withClient && { clientId }), day: today, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 2, delivered: 0, verified: 0, cost: '0', costPerVerified: null },
  ];

  it("prints every client's figures, or one client's, as a table or one JSON object a line, through the running server", async () => {
    const table = await runCommand(['stats'], { DATA_DIR: dir });
    assert.equal(table.code, 0, table.stderr);
    assert.equal(table.stdout, `CLIENT_ID\t${header}\n${clientId}\t${today}\tGH\t+233\tSMS\t1\t0\t1\t0\t0\n${clientId}\t${today}\tNG\t+234\tSMS\t2\t0\t0\t0\t-\n`);
    const json = await runCommand(['stats', '--json'], { DATA_DIR: dir });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(jsonLines(json.stdout), expected(true));

    const mine = await runCommand(['stats', '--client', clientId, '--from', today, '--to', today], { DATA_DIR: dir });
    assert.equal(mine.code, 0, mine.stderr);
    assert.equal(mine.stdout, `${header}\n${today}\tGH\t+233\tSMS\t1\t0\t1\t0\t0\n${today}\tNG\t+234\tSMS\t2\t0\t0\t0\t-\n`);
    const mineJson = await runCommand(['stats', '--client', clientId, '--json'], { DATA_DIR: dir });
    assert.deepEqual(jsonLines(mineJson.stdout), expected(false));

    const none = await runCommand(['stats', '--from', '2020-01-01', '--to', '2020-01-31'], { DATA_DIR: dir });
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, 'no traffic from 2020-01-01 to 2020-01-31\n');
  });

  it('refuses a bad day, an unknown client and a stray argument', async () => {
    const bad = await runCommand(['stats', '--from', '2026-02-30'], { DATA_DIR: dir });
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.split('\n').at(-2), 'error: --from must be a calendar day, YYYY-MM-DD');
    const late = await runCommand(['stats', '--from', '2026-11-22', '--to', '2026-11-21', '--json'], { DATA_DIR: dir });
    assert.equal(late.code, 1);
    assert.deepEqual(JSON.parse(late.stderr), { error: '--from must not be after to (2026-11-21)' });
    const yearZero = await runCommand(['stats', '--from', '0000-01-01'], { DATA_DIR: dir });
    assert.equal(yearZero.code, 1);
    assert.equal(yearZero.stderr.split('\n').at(-2), 'error: --from must be 0001-01-01 or later');
    const unknown = await runCommand(['stats', '--client', '00000000-0000-4000-8000-000000000000'], { DATA_DIR: dir });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no client 00000000-0000-4000-8000-000000000000/);
    const stray = await runCommand(['stats', 'today'], { DATA_DIR: dir });
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /usage: otp-service stats/);
  });

  it('reads the database itself once the server has stopped', async () => {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const ran = await runCommand(['stats', '--json'], { DATA_DIR: dir });
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(jsonLines(ran.stdout), expected(true));
    const yearZero = await runCommand(['stats', '--to', '0000-01-07'], { DATA_DIR: dir });
    assert.equal(yearZero.code, 1);
    assert.equal(yearZero.stderr.split('\n').at(-2), 'error: --to must be 0001-01-01 or later');
    const first = await runCommand(['stats', '--to', '0001-01-03'], { DATA_DIR: dir });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'no traffic from 0001-01-01 to 0001-01-03\n');
  });
});

describe('otp-service stats on PostgreSQL, beside a running service', { skip: postgresSkip }, () => {
  let h: Harness;
  before(async () => {
    h = await createHarness('postgres');
  });
  after(() => h.close());

  it("prints each client's figures of the days asked for", async () => {
    const a = await h.client();
    const b = await h.client();
    const tokenA = await h.token(undefined, a);
    const v = await createVerification(h, tokenA);
    assert.equal((await h.call('POST', '/v1/otp/verify', tokenA, { id: v.id, otp: v.otp })).statusCode, 200);
    await createVerification(h, await h.token(undefined, b), { countryCode: '+44', phoneNumber: '07400123459' });
    // The harness's clock is not the CLI's: name the day the verifications were made.
    const day = h.clock.now().toISOString().slice(0, 10);
    const env = { DATABASE_URL: String(h.config.DATABASE_URL) };
    const ran = await runCommand(['stats', '--from', day, '--to', day, '--json'], env);
    assert.equal(ran.code, 0, ran.stderr);
    const rows = jsonLines(ran.stdout);
    assert.deepEqual(
      rows.filter((r) => r.clientId === a.clientId || r.clientId === b.clientId),
      [
        { clientId: b.clientId, day, regionCode: 'GB', countryCode: '+44', channel: 'SMS', sends: 1, delivered: 0, verified: 0, cost: '0', costPerVerified: null },
        { clientId: a.clientId, day, regionCode: 'NG', countryCode: '+234', channel: 'SMS', sends: 1, delivered: 0, verified: 1, cost: '0', costPerVerified: '0' },
      ],
    );
    const one = await runCommand(['stats', '--client', b.clientId, '--from', day, '--to', day], env);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout, `${header}\n${day}\tGB\t+44\tSMS\t1\t0\t0\t0\t-\n`);
  });
});
