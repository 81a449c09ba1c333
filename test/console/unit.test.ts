import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csrfTokenMatches, csrfTokenOf, originAllowed } from '../../src/console/csrf.js';
import { hashPassword, passwordMatches, passwordProblem, unmatchableHash } from '../../src/console/password.js';
import { consoleSessionPolicy, sessionAlive } from '../../src/console/session-policy.js';
import { searchKind } from '../../src/admin/verification-search.js';
import { loadConfig } from '../../src/config.js';

describe('console passwords (scrypt)', () => {
  it('verifies the password hashed and no other, with a fresh salt each time', async () => {
    const a = await hashPassword('correct horse battery', Buffer.alloc(16, 1));
    const b = await hashPassword('correct horse battery', Buffer.alloc(16, 2));
    assert.notEqual(a, b, 'the salt changes the hash');
    assert.match(a, /^scrypt\$32768\$8\$1\$/);
    assert.equal(await passwordMatches('correct horse battery', a), true);
    assert.equal(await passwordMatches('correct horse batterY', a), false);
    assert.equal(await passwordMatches('', a), false);
    assert.equal(await passwordMatches('correct horse battery', unmatchableHash), false, 'the stand-in hash matches nothing');
    assert.equal(await passwordMatches('correct horse battery', 'sha256$abc'), false, 'a hash of another kind never matches');
  });

  it('refuses passwords too short or too long', () => {
    assert.match(passwordProblem('short') ?? '', /at least 12/);
    assert.match(passwordProblem('x'.repeat(201)) ?? '', /at most 200/);
    assert.equal(passwordProblem('twelve chars'), null);
  });
});

describe('console CSRF checks', () => {
  it("takes the session's own token only", () => {
    const token = csrfTokenOf('session-a');
    assert.equal(csrfTokenMatches('session-a', token), true);
    assert.equal(csrfTokenMatches('session-b', token), false, "another session's token");
    assert.equal(csrfTokenMatches('session-a', undefined), false, 'no header');
    assert.equal(csrfTokenMatches('session-a', token.slice(1)), false, 'a shorter one');
    assert.equal(csrfTokenMatches('session-a', `${token.slice(0, -1)}A`), false);
  });

  it('takes the exact origin only', () => {
    assert.equal(originAllowed('https://otp.example.com', 'https://otp.example.com'), true);
    assert.equal(originAllowed('https://evil.example', 'https://otp.example.com'), false);
    assert.equal(originAllowed('http://otp.example.com', 'https://otp.example.com'), false, 'scheme');
    assert.equal(originAllowed('https://otp.example.com:8443', 'https://otp.example.com'), false, 'port');
    assert.equal(originAllowed(undefined, 'https://otp.example.com'), false, 'no Origin on a change');
    assert.equal(originAllowed('null', 'https://otp.example.com'), false, 'an opaque origin');
  });
});

describe('console session expiry', () => {
  const t0 = new Date('2026-11-25T09:00:00.000Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);
  it('ends after 30 minutes idle', () => {
    assert.equal(sessionAlive({ createdAt: t0, lastSeenAt: t0 }, at(29 * 60_000), consoleSessionPolicy), true);
    assert.equal(sessionAlive({ createdAt: t0, lastSeenAt: t0 }, at(30 * 60_000), consoleSessionPolicy), false);
  });
  it('ends 12 hours after sign-in however busy', () => {
    assert.equal(sessionAlive({ createdAt: t0, lastSeenAt: at(12 * 3_600_000 - 1_000) }, at(12 * 3_600_000 - 1), consoleSessionPolicy), true);
    assert.equal(sessionAlive({ createdAt: t0, lastSeenAt: at(12 * 3_600_000 - 1_000) }, at(12 * 3_600_000), consoleSessionPolicy), false);
  });
});

describe('verification search queries', () => {
  it('reads an id, a number or a reference', () => {
    assert.deepEqual(searchKind('0193A0C2-1111-7000-8000-000000000001'), { id: '0193a0c2-1111-7000-8000-000000000001' });
    assert.deepEqual(searchKind('+234 803 123 4567'), { phoneNumber: '+2348031234567' });
    assert.deepEqual(searchKind('order-42'), { reference: 'order-42' });
  });
});

describe('console settings', () => {
  const problemsOf = (env: Record<string, string>): string => {
    try {
      loadConfig({ DATA_DIR: 'memory://', ...env });
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  };
  it('needs an https origin in production, and takes an origin only', () => {
    assert.match(problemsOf({ CONSOLE: 'true', NODE_ENV: 'production' }), /CONSOLE: true with NODE_ENV=production needs the console's https origin/);
    assert.match(problemsOf({ CONSOLE: 'true', NODE_ENV: 'production', CONSOLE_ORIGIN: 'http://otp.example.com' }), /CONSOLE: true/);
    assert.doesNotMatch(problemsOf({ CONSOLE: 'true', NODE_ENV: 'production', CONSOLE_ORIGIN: 'https://otp.example.com' }), /CONSOLE/);
    assert.doesNotMatch(problemsOf({ CONSOLE: 'true', NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://otp.example.com/base' }), /CONSOLE/);
    assert.match(problemsOf({ CONSOLE_ORIGIN: 'https://otp.example.com/console' }), /CONSOLE_ORIGIN: must be an origin/);
    assert.equal(loadConfig({ DATA_DIR: 'memory://', PUBLIC_BASE_URL: 'https://otp.example.com/base' }).consoleOrigin, 'https://otp.example.com');
    assert.equal(loadConfig({ DATA_DIR: 'memory://', CONSOLE_ORIGIN: 'https://console.example.com:8443/' }).consoleOrigin, 'https://console.example.com:8443');
    assert.equal(loadConfig({ DATA_DIR: 'memory://' }).consoleOrigin, null);
    assert.equal(loadConfig({ DATA_DIR: 'memory://' }).CONSOLE, false, 'off by default');
  });
});
