import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { findPostgresBin, startTempPostgres, type TempPostgres } from '../../scripts/temp-postgres.js';
import { e164Of, eventually, nextLocalNumber } from '../support/api.js';
import { kill, startServerChild, type ChildService } from '../webhooks/processes.js';
import { runCommand } from '../support/command-line.js';

/** Small, so that the test is quick. */
const timeoutMs = 1000;
/** Contract 6 says within DATABASE_TIMEOUT_MS; this allows for a busy machine. */
const answerWithinMs = 2 * timeoutMs;

/** The postmaster of a data folder and every process it started (backends and helpers). */
function serverProcesses(dataDir: string): number[] {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  assert.ok(Number.isInteger(postmaster) && postmaster > 0);
  const children = fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === postmaster ? [Number(entry)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
  return [postmaster, ...children];
}

function signal(pids: readonly number[], sig: 'SIGSTOP' | 'SIGCONT'): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // gone meanwhile
    }
  }
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { status?: boolean; error?: { code: string }; data?: { id: string; otp: string; status: string } };
  text: string;
  ms: number;
}

/**
 * Contract 6: a PostgreSQL server that stops answering (SIGSTOP: no server-side timer can fire) turns into
 * 503 UNAVAILABLE within DATABASE_TIMEOUT_MS, /readyz 503, nothing half done; once it answers again (SIGCONT)
 * so does the service, without a restart. Real processes: a PostgreSQL of its own (the test runner's server
 * cannot be stopped for one test) and the service as a child process.
 */
describe('a frozen PostgreSQL', { skip: findPostgresBin() ? false : 'PostgreSQL binaries not found' }, () => {
  let postgres: TempPostgres;
  let server: ChildService & { url: string };
  let env: Record<string, string>;
  before(async () => {
    postgres = await startTempPostgres({ fsync: 'off', synchronous_commit: 'off' });
    env = {
      DATABASE_URL: postgres.url,
      DATABASE_TIMEOUT_MS: String(timeoutMs),
      CLIENT_RATE_LIMIT_PER_SECOND: '0',
      PHONE_COOLDOWN_SECONDS: '0',
    };
    server = await startServerChild(env);
  });
  after(async () => {
    if (server) await kill(server, 'SIGKILL');
    postgres?.stop();
  });

  async function call(method: 'GET' | 'POST', url: string, token: string | null, body?: unknown): Promise<Answer> {
    const started = Date.now();
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...(token && { authorization: `Bearer ${token}` }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      // A hung request fails the test rather than holding it up.
      signal: AbortSignal.timeout(answerWithinMs + 10_000),
    });
    const text = await res.text();
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: JSON.parse(text) as Answer['body'], text, ms: Date.now() - started };
  }

  function expectUnavailable(answer: Answer, what: string): void {
    assert.equal(answer.status, 503, `${what}: ${answer.text}`);
    assert.equal(answer.body.error?.code, 'UNAVAILABLE', what);
    assert.equal(answer.retryAfter, String(timeoutMs / 1000), what);
    assert.doesNotMatch(answer.text, /\n\s+at\s|\.ts:\d+|node_modules|"stack"/, what);
    assert.ok(answer.ms < answerWithinMs, `${what} answered in ${answer.ms} ms`);
  }

  it('answers 503 UNAVAILABLE while the server is stopped, and recovers without a restart once it runs again', async () => {
    const cli = await runCommand(['clients', 'create', '--name', 'frozen', '--scopes', 'otp:send otp:verify', '--json'], env);
    assert.equal(cli.code, 0, cli.stderr);
    const client = JSON.parse(cli.stdout) as { clientId: string; clientSecret: string };
    const tokenRes = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }),
    });
    assert.equal(tokenRes.status, 200);
    const { accessToken: token } = (await tokenRes.json()) as { accessToken: string };
    const created = await call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber() });
    assert.equal(created.status, 200, created.text);
    const existing = created.body.data;
    assert.ok(existing);

    const frozenNumbers = [nextLocalNumber(), nextLocalNumber()];
    const stopped = serverProcesses(postgres.dataDir);
    signal(stopped, 'SIGSTOP');
    try {
      // Twice: the first round meets the connections the pool holds, the second the pool after it gave them up.
      for (const phoneNumber of frozenNumbers) {
        const answers: Answer[] = await Promise.all([
          call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber }),
          call('GET', `/v1/otp/${existing.id}`, token),
          call('POST', '/v1/otp/verify', token, { id: existing.id, otp: existing.otp }),
          call('GET', '/readyz', null),
        ]);
        const [create, fetched, verify, ready] = answers as [Answer, Answer, Answer, Answer];
        expectUnavailable(create, 'create');
        expectUnavailable(fetched, 'fetch');
        expectUnavailable(verify, 'verify');
        assert.equal(ready.status, 503, ready.text);
        assert.ok(ready.ms < answerWithinMs, `readyz answered in ${ready.ms} ms`);
      }
      assert.equal((await call('GET', '/healthz', null)).status, 200);
    } finally {
      signal(stopped, 'SIGCONT');
    }

    // The same process answers again once the database does.
    await eventually(async () => (await call('GET', '/readyz', null)).status === 200, 15_000);
    const again = await call('POST', '/v1/otp/request', token, { countryCode: '+234', phoneNumber: nextLocalNumber() });
    assert.equal(again.status, 200, again.text);
    // Nothing half done: the refused verify changed nothing, the refused creates left nothing behind.
    const fetched = await call('GET', `/v1/otp/${existing.id}`, token);
    assert.equal(fetched.status, 200, fetched.text);
    assert.equal(fetched.body.data?.status, 'PENDING');
    const verified = await call('POST', '/v1/otp/verify', token, { id: existing.id, otp: existing.otp });
    assert.equal(verified.status, 200, verified.text);
    const direct = new pg.Client({ connectionString: postgres.url });
    await direct.connect();
    try {
      const left = await direct.query('SELECT count(*)::int AS n FROM verifications WHERE phone_number = ANY($1)', [frozenNumbers.map(e164Of)]);
      assert.equal((left.rows[0] as { n: number }).n, 0);
    } finally {
      await direct.end();
    }
    // The background tasks said what happened, and kept going.
    assert.match(server.output(), /database unavailable/);
    assert.equal(await kill(server, 'SIGTERM'), 0, 'a clean shutdown');
  });
});
