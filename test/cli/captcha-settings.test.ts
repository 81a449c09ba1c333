import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, postgresSkip, type TestDatabase } from '../support/databases.js';
import { runCommand } from '../support/command-line.js';

/** Contract 14: `clients update ID --captcha ... --captcha-secret S [--captcha-min-score N]`, the secret never shown in full. */
describe('otp-service clients update --captcha', { skip: postgresSkip }, () => {
  let db: TestDatabase;
  before(async () => {
    db = await freshDatabase('postgres');
  });
  after(() => db.drop());

  const cli = (...args: string[]) => runCommand(args, db.env);

  it('sets, shows (masked) and clears a CAPTCHA', async () => {
    const created = await cli('clients', 'create', '--name', 'web', '--scopes', 'otp:send', '--json');
    const { clientId } = JSON.parse(created.stdout) as { clientId: string };
    const secret = '0x4AAAAAAAbcdefghijklmnop';
    const set = await cli('clients', 'update', clientId, '--captcha', 'turnstile', '--captcha-secret', secret, '--captcha-min-score', '0.7');
    assert.equal(set.code, 0, set.stderr);
    assert.ok(!set.stdout.includes(secret));
    const shown = await cli('clients', 'show', clientId, '--json');
    assert.ok(!shown.stdout.includes(secret), shown.stdout);
    assert.deepEqual((JSON.parse(shown.stdout) as { settings: { captcha: unknown } }).settings.captcha, {
      provider: 'turnstile',
      secret: '0x4A… (25 characters)',
      minScore: 0.7,
      when: 'always',
    });
    // Issue 20: the CAPTCHA asked for only when a throttle would refuse.
    assert.equal((await cli('clients', 'update', clientId, '--captcha-when', 'throttled')).code, 0);
    const throttled = JSON.parse((await cli('clients', 'show', clientId, '--json')).stdout) as { settings: { captcha: { when: string; minScore: number } } };
    assert.deepEqual([throttled.settings.captcha.when, throttled.settings.captcha.minScore], ['throttled', 0.7]);
    const badWhen = await cli('clients', 'update', clientId, '--captcha-when', 'sometimes');
    assert.notEqual(badWhen.code, 0);
    assert.match(badWhen.stderr, /--captcha-when takes always or throttled/);
    const bad = await cli('clients', 'update', clientId, '--captcha', 'friendlycaptcha');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--captcha takes turnstile, hcaptcha, recaptcha or none/);
    const noSecret = await cli('clients', 'update', clientId, '--captcha', 'hcaptcha');
    assert.notEqual(noSecret.code, 0);
    assert.match(noSecret.stderr, /needs --captcha-secret/);
    assert.equal((await cli('clients', 'update', clientId, '--captcha', 'none')).code, 0);
    assert.equal((JSON.parse((await cli('clients', 'show', clientId, '--json')).stdout) as { settings: { captcha: unknown } }).settings.captcha, null);
  });
});
