import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { cryptoRandom } from '../../src/domain/random.js';
import { Workers } from '../../src/jobs/workers.js';
import { createServices, type Services } from '../../src/services.js';
import { workerDeps } from '../../src/server.js';
import { postgresSkip } from '../support/databases.js';
import { createHarness, type Harness } from '../support/harness.js';
import { waitFor } from '../webhooks/helpers.js';

/**
 * Contract 2 and 4: a client change (disabled, new webhook secret) reaches every instance within 2 s on
 * PostgreSQL, by NOTIFY, though the other instance's cache would otherwise keep the old copy for up to 50 s.
 */
let h: Harness;
let other: Services;
let workers: Workers;
before(async () => {
  if (postgresSkip) return;
  h = await createHarness('postgres');
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: h.config.DATABASE_URL ?? '' });
  // The other instance's clock stands still: its cache never goes stale by age, only by notification.
  other = await createServices(config, pino({ level: 'silent' }), h.clock, cryptoRandom);
  workers = new Workers(workerDeps(other, false));
  await workers.start();
});
after(async () => {
  if (postgresSkip) return;
  await workers.stop();
  await other.db.close();
  await h.close();
});

it('disables a client on every instance within 2 s', { skip: postgresSkip }, async () => {
  const c = await h.client(['otp:send']);
  const token = await h.token(['otp:send'], c);
  assert.ok(await other.tokens.authenticate(token), 'the other instance knows the client');
  await h.services.clients.disable(c.clientId);
  const started = Date.now();
  await waitFor('the other instance to refuse the token', async () => (await other.tokens.authenticate(token)) === null, 2_000);
  assert.ok(Date.now() - started < 2_000);
});

it('signs with a rotated webhook secret on every instance within 2 s', { skip: postgresSkip }, async () => {
  const c = await h.client(['otp:send']);
  const before = await other.clientDirectory.get(c.clientId);
  assert.equal(before?.webhookSecret, c.webhookSecret);
  const rotated = await h.services.clients.rotateWebhookSecret(c.clientId);
  assert.ok(rotated);
  await waitFor('the other instance to have the new secret', async () => (await other.clientDirectory.get(c.clientId))?.webhookSecret === rotated.webhookSecret, 2_000);
});
